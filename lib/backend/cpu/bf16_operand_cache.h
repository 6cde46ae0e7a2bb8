// bf16 copies of product operands that a training step uses more than once (Backend::keep_bf16_operand):
// a Linear's input x feeds x W^T in forward and dW = dy^T x in backward, its output gradient dy feeds both
// dx = dy W and dW, attention's q, k, v and weights feed one product each way. Each such operand is
// converted once per step instead of once per product; the copy of a kept range lives until the range is
// forgotten as often as it was kept, or until clear(). A kernel producing a kept range writes its copy
// as it goes (CpuBackend::bf16_output_copy), so most copies cost no pass of their own. The copies live in one buffer sized to the busiest
// step so far (no fresh pages each step, memory = what one step holds at once).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
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
    int64_t size() const { return int64_t{batch1} * batch2 * rows * cols; }  // elements of the dense copy
    bool dense() const {
      return s.ld == cols && (batch2 == 1 || s.batch2 == rows * cols) && (batch1 == 1 || s.batch1 == batch2 * rows * cols);
    }
  };

  void keep(const float* x, int64_t n);
  void forget(const float* x);
  void clear();  // forgets every range; keeps the step buffer, grown to this step's peak if it overflowed

  // The copy of `operand` when it lies inside a kept range: `fresh` tells the caller to fill it (dense
  // rows * cols per matrix, batch1 * batch2 matrices). Null when no kept range holds the operand. Dense
  // operands share one copy whatever shape views them: a kernel that writes the copy of what it produces
  // knows only its n elements ({x, 1, 1, 1, n}), the product that reads it a [B, H, Tq, Tk] grid.
  uint16_t* find(const Layout& operand, bool& fresh);

  int64_t kept_ranges() const { return static_cast<int64_t>(ranges_.size()); }
  int64_t copies() const;
  int64_t capacity() const { return capacity_; }  // elements of the step buffer

 private:
  using Key = std::array<int64_t, 8>;  // address, batch1, batch2, rows, cols, the three strides
  // Elements mapped straight from the system (mmap), so that freeing them gives the memory back: a
  // step that outgrows the buffer frees its overflow before the bigger buffer is taken, and peak memory
  // stays one step's worth instead of heap chunks plus the buffer.
  class Pages {
   public:
    Pages() = default;
    explicit Pages(int64_t n);
    ~Pages();
    Pages(Pages&& o) noexcept : data_(o.data_), bytes_(o.bytes_) { o.data_ = nullptr, o.bytes_ = 0; }
    Pages& operator=(Pages&& o) noexcept;
    uint16_t* data() const { return data_; }

   private:
    uint16_t* data_ = nullptr;
    size_t bytes_ = 0;
  };
  struct Copy {
    Key key;
    uint16_t* data;
    int64_t size;
    int64_t slot;    // index into slots_, or -1: an overflow allocation
    Pages overflow;  // owns data when slot is -1
  };
  struct Range {
    uintptr_t begin, end;  // bytes
    int count;
    std::vector<Copy> copies;
  };
  // Copies come from one buffer as a stack: a step keeps in forward order and forgets in nearly the
  // reverse order, so freeing the top frees what the next copy needs. A step that outgrows the buffer
  // takes separate allocations, and clear() then grows the buffer to that step's peak for the next one.
  struct Slot {
    int64_t offset;
    bool live;
  };

  Copy allocate(const Key& key, int64_t n);
  void release(Copy& c);

  std::vector<Range> ranges_;
  Pages buffer_;
  int64_t capacity_ = 0, top_ = 0;
  std::vector<Slot> slots_;
  // Elements in overflow allocations now; the most the step buffer and overflow held at once since clear().
  int64_t overflow_ = 0, peak_ = 0;
};

}  // namespace tt::backend::cpu
