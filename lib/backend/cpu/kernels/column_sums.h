// Column sums of [N, D] rows (bias gradients) in an order that does not depend on the thread count: rows
// in fixed blocks of kSumBlockRows, each block's sums in row order into its partial [D], then the partials
// in block order. Shared by bias_backward and the kernels that take a bias gradient on the way (the same
// bits either way). Internal linkage: each instruction-set variant compiles its own copy.
#pragma once

#include <algorithm>
#include <cstdint>

#include "backend/cpu/kernels/kernel_functions.h"

namespace tt::backend::cpu::TT_CPU_ISA {
namespace {

constexpr int64_t kSumBlockRows = 32;

inline int64_t sum_blocks(int64_t N) { return (N + kSumBlockRows - 1) / kSumBlockRows; }

// Row i of block `first_row`'s rows into its partial: the block's first row is copied, later ones added.
inline void add_row_to_partial(float* partial, const float* row, int D, bool first) {
  if (first) {
    std::copy(row, row + D, partial);
    return;
  }
#pragma omp simd
  for (int j = 0; j < D; ++j) partial[j] += row[j];
}

// dbias[j] += the partials' sum in block order, for columns [j0, j1) (at most 64), so that threads can
// split the columns.
inline void add_partials(float* dbias, const float* partials, int64_t blocks, int D, int j0, int j1) {
  float total[64] = {};
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const float* acc = partials + blk * D;
#pragma omp simd
    for (int j = j0; j < j1; ++j) total[j - j0] += acc[j];
  }
  for (int j = j0; j < j1; ++j) dbias[j] += total[j - j0];
}

}  // namespace
}  // namespace tt::backend::cpu::TT_CPU_ISA
