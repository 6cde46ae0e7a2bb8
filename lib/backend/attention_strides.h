// Strides of attention's operands for the Backend base class's composed attention (fused_defaults.cpp,
// bf16_storage_defaults.cpp): projections as the Linear layers leave them, and dense per-head grids.
#pragma once

#include <cstdint>

#include "backend/backend.h"

namespace tt::backend::attention_strides {

// Operand rows b * T + t of stride ld, head h at column h * Dh.
inline MatrixStrides heads(int T, int64_t ld, int Dh) { return MatrixStrides{T * ld, Dh, ld}; }

// A dense [B, H, rows, cols] grid: scores [B, H, Tq, Tk], or q, k, v stored per head [B, H, T, Dh].
inline MatrixStrides dense(int H, int rows, int cols) {
  return MatrixStrides{int64_t{H} * rows * cols, int64_t{rows} * cols, cols};
}

// Elements from a heads operand's first to one past its last: B * T rows of stride ld, H * Dh used.
inline int64_t head_rows(int B, int T, int64_t ld, int H, int Dh) {
  return (int64_t{B} * T - 1) * ld + int64_t{H} * Dh;
}

}  // namespace tt::backend::attention_strides
