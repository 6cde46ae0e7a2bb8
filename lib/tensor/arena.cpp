#include "tensor/arena.h"

#include <algorithm>

namespace tt::tensor {

static constexpr size_t kAlign = 64;
static size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

Arena::Arena(backend::Backend& backend, size_t initial_bytes) : backend_(backend) {
  if (initial_bytes) chunks_.push_back(std::make_shared<Buffer>(backend_, align_up(initial_bytes)));
}

size_t Arena::capacity_bytes() const {
  size_t total = 0;
  for (auto& c : chunks_) total += c->bytes();
  return total;
}

size_t Arena::rounded_bytes(const Shape& shape, DType dtype) {
  return align_up(std::max<size_t>(1, static_cast<size_t>(shape.numel()) * dtype_size(dtype)));
}

void Arena::reserve(size_t bytes) {
  bytes = align_up(bytes);
  if (!chunks_.empty() && chunks_.back()->bytes() - used_in_last_ >= bytes) return;
  if (used_total_ == 0) chunks_.clear();  // nothing handed out since reset(): the old chunks can go
  chunks_.push_back(std::make_shared<Buffer>(backend_, bytes));
  used_in_last_ = 0;
}

Tensor Arena::allocate(Shape shape, DType dtype) {
  size_t bytes = rounded_bytes(shape, dtype);
  if (chunks_.empty() || used_in_last_ + bytes > chunks_.back()->bytes()) {
    // Spill: a new chunk at least as large as everything so far, so spills stay logarithmic.
    size_t size = std::max(bytes, std::max<size_t>(capacity_bytes(), size_t{1} << 20));
    chunks_.push_back(std::make_shared<Buffer>(backend_, size));
    used_in_last_ = 0;
  }
  size_t offset_bytes = used_in_last_;
  used_in_last_ += bytes;
  used_total_ += bytes;
  high_water_ = std::max(high_water_, used_total_);
  return Tensor(chunks_.back(), static_cast<int64_t>(offset_bytes / dtype_size(dtype)), shape, dtype);
}

void Arena::reset() {
  if (chunks_.size() > 1) {
    chunks_.clear();  // tensors still held keep their chunk alive through shared ownership
    chunks_.push_back(std::make_shared<Buffer>(backend_, high_water_));
  }
  used_in_last_ = 0;
  used_total_ = 0;
}

}  // namespace tt::tensor
