#include "nn/decode_state.h"

#include <algorithm>

#include "ops/copy.h"
#include "ops/view.h"

namespace tt::nn {

using tensor::Shape;

StepKeys DecodeState::begin_step() {
  const int n = length_ + 1;
  host_rows_.resize(static_cast<size_t>(rows_) * n);
  for (int r = 0; r < rows_; ++r) {
    int32_t* history = slots_.data() + static_cast<size_t>(r) * max_length_;
    history[length_] = r;  // this step's K/V go to slot r of time slice `length_`
    for (int j = 0; j < n; ++j) host_rows_[static_cast<size_t>(r) * n + j] = j * max_rows_ + history[j];
  }
  StepKeys keys;
  keys.self_rows = ops::view(self_rows_, 0, Shape{rows_, n});
  ops::upload(keys.self_rows, host_rows_);
  host_counts_.assign(static_cast<size_t>(rows_), n);
  keys.self_counts = ops::view(self_counts_, 0, Shape{rows_});
  ops::upload(keys.self_counts, host_counts_);
  keys.cross_rows = ops::view(cross_rows_, 0, Shape{rows_, S_});
  keys.cross_counts = ops::view(cross_counts_, 0, Shape{rows_});
  if (cross_stale_) {
    host_rows_.resize(static_cast<size_t>(rows_) * S_);
    for (int r = 0; r < rows_; ++r) {
      const int32_t b = sentence_[static_cast<size_t>(r)];
      for (int j = 0; j < S_; ++j) host_rows_[static_cast<size_t>(r) * S_ + j] = b * S_ + j;
      host_counts_[static_cast<size_t>(r)] = src_lengths_host_[static_cast<size_t>(b)];
    }
    ops::upload(keys.cross_rows, host_rows_);
    ops::upload(keys.cross_counts, host_counts_);
    cross_stale_ = false;
  }
  return keys;
}

void DecodeState::select_rows(const std::vector<int32_t>& index) {
  const size_t rows = index.size(), stride = static_cast<size_t>(max_length_), n = static_cast<size_t>(length_);
  std::vector<int32_t> slots(rows * stride), sentence(rows);
  for (size_t i = 0; i < rows; ++i) {
    const size_t from = static_cast<size_t>(index[i]);
    std::copy_n(slots_.begin() + static_cast<ptrdiff_t>(from * stride), n,
                slots.begin() + static_cast<ptrdiff_t>(i * stride));
    sentence[i] = sentence_[from];
  }
  std::copy(slots.begin(), slots.end(), slots_.begin());
  sentence_ = std::move(sentence);
  rows_ = static_cast<int>(rows);
  cross_stale_ = true;
}

}  // namespace tt::nn
