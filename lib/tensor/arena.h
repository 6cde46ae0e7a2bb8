// Per-step bump allocator for activations. The first step may spill into extra chunks; reset() then
// replaces them with one chunk of the high-water size, so from the second step on every step reuses the
// same, already-touched memory (a fresh 4 KiB page costs ~12 µs on first touch here).
// Tensors handed out stay valid until the next reset(); they keep their chunk alive if held longer.
#pragma once

#include <memory>
#include <vector>

#include "tensor/tensor.h"

namespace tt::tensor {

class Arena {
 public:
  explicit Arena(backend::Backend& backend, size_t initial_bytes = 0);
  Tensor allocate(Shape shape, DType dtype = DType::f32);
  // Room for `bytes` more (allocations count rounded up to 64 bytes each) in the current chunk, else one new
  // chunk of exactly that size: a caller that knows its total (a decoding cache) spares the spill chunks
  // (5.7 + 5.7 + 11 + 23 + 46 MB, then 46 again at reset, for a tiny model's 46 MB cache), their page
  // faults and their peak memory.
  void reserve(size_t bytes);
  static size_t rounded_bytes(const Shape& shape, DType dtype = DType::f32);
  void reset();
  size_t high_water_bytes() const { return high_water_; }
  size_t capacity_bytes() const;

 private:
  backend::Backend& backend_;
  std::vector<std::shared_ptr<Buffer>> chunks_;
  size_t used_in_last_ = 0;  // bytes used in chunks_.back()
  size_t used_total_ = 0;    // bytes handed out since reset (incl. alignment)
  size_t high_water_ = 0;
};

// Resets an arena when the scope ends (also on exceptions).
class ArenaScope {
 public:
  explicit ArenaScope(Arena& arena) : arena_(arena) {}
  ~ArenaScope() { arena_.reset(); }
  ArenaScope(const ArenaScope&) = delete;
  ArenaScope& operator=(const ArenaScope&) = delete;

 private:
  Arena& arena_;
};

}  // namespace tt::tensor
