// bf16 copies of product operands that a training step uses more than once (Backend::keep_bf16_operand):
// a Linear's input x feeds x W^T in forward and dW = dy^T x in backward, its output gradient dy feeds both
// dx = dy W and dW, attention's q, k, v and weights feed one product each way. Each such operand is
// converted once per step instead of once per product; the copy of a kept range lives until the range is
// forgotten as often as it was kept, or until clear(). Buffers go back to a free list for the next step's
// operands (no fresh pages each step).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "backend/backend.h"

namespace tt::backend::cpu {

class Bf16OperandCache {
 public:
  // A stored operand: its first element and its [batch1, batch2] grid of [rows, cols] at strides s.
  struct Layout {
    const float* x;
    int batch1, batch2;
    int64_t rows, cols;
    MatrixStrides s;
  };

  void keep(const float* x, int64_t n);
  void forget(const float* x);
  void clear();  // forgets every range; keeps the buffers for reuse

  // The copy of `operand` when it lies inside a kept range: `fresh` tells the caller to fill it (dense
  // rows * cols per matrix, batch1 * batch2 matrices). Null when no kept range holds the operand.
  uint16_t* find(const Layout& operand, bool& fresh);

  int64_t kept_ranges() const { return static_cast<int64_t>(ranges_.size()); }
  int64_t copies() const;

 private:
  struct Buffer {
    std::unique_ptr<uint16_t[]> data;
    int64_t capacity = 0;
  };
  using Key = std::array<int64_t, 8>;  // address, batch1, batch2, rows, cols, the three strides
  struct Copy {
    Key key;
    Buffer buffer;
  };
  struct Range {
    uintptr_t begin, end;  // bytes
    int count;
    std::vector<Copy> copies;
  };

  Buffer take(int64_t n);
  void recycle(Range& r);

  std::vector<Range> ranges_;
  std::vector<Buffer> free_;
  int64_t live_ = 0, peak_live_ = 0;  // elements in copies now, and at most since the last clear()
};

}  // namespace tt::backend::cpu
