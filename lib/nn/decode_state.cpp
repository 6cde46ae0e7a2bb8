#include "nn/decode_state.h"

#include <algorithm>

#include "ops/copy.h"
#include "ops/view.h"

namespace tt::nn {

using tensor::Shape;

StepKeys DecodeState::begin_step(int n, tensor::Arena& arena) {
  const int keys_n = length_ + n, queries = rows_ * n;
  const auto i32 = tensor::DType::i32;
  host_rows_.resize(static_cast<size_t>(queries) * keys_n);
  host_counts_.resize(static_cast<size_t>(queries));
  for (int t = 0; t < n; ++t)  // the new slices, rows_ long each, after the last one
    slice_start_[static_cast<size_t>(length_ + t + 1)] = slice_start_[static_cast<size_t>(length_ + t)] + rows_;
  for (int r = 0; r < rows_; ++r) {
    int32_t* history = slots_.data() + static_cast<size_t>(r) * max_length_;
    for (int t = 0; t < n; ++t) history[length_ + t] = r;  // these positions' K/V go to slot r of their slices
    for (int t = 0; t < n; ++t) {
      const size_t q = static_cast<size_t>(t) * rows_ + r;
      // Columns past the query's own position are never read (its count stops before them).
      for (int j = 0; j < keys_n; ++j)
        host_rows_[q * keys_n + j] = static_cast<int32_t>(slice_start_[static_cast<size_t>(j)] + history[j]);
      host_counts_[q] = length_ + t + 1;
    }
  }
  StepKeys keys;
  keys.first_position = length_;
  keys.positions = n;
  keys.first_row = slice_start_[static_cast<size_t>(length_)];
  keys.self_rows = n == 1 ? ops::view(self_rows_, 0, Shape{rows_, keys_n}) : arena.allocate(Shape{queries, keys_n}, i32);
  keys.self_counts = n == 1 ? ops::view(self_counts_, 0, Shape{rows_}) : arena.allocate(Shape{queries}, i32);
  ops::upload(keys.self_rows, host_rows_);
  ops::upload(keys.self_counts, host_counts_);
  if (n == 1) {  // the state's cross tables, uploaded again only when the rows changed
    keys.cross_rows = ops::view(cross_rows_, 0, Shape{rows_, S_});
    keys.cross_counts = ops::view(cross_counts_, 0, Shape{rows_});
    if (!cross_stale_) return keys;
    cross_stale_ = false;
  } else {
    keys.cross_rows = arena.allocate(Shape{queries, S_}, i32);
    keys.cross_counts = arena.allocate(Shape{queries}, i32);
  }
  host_rows_.resize(static_cast<size_t>(queries) * S_);
  for (int q = 0; q < queries; ++q) {
    const int32_t b = sentence_[static_cast<size_t>(q % rows_)];
    for (int j = 0; j < S_; ++j) host_rows_[static_cast<size_t>(q) * S_ + j] = b * S_ + j;
    host_counts_[static_cast<size_t>(q)] = src_lengths_host_[static_cast<size_t>(b)];
  }
  ops::upload(keys.cross_rows, host_rows_);
  ops::upload(keys.cross_counts, host_counts_);
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
