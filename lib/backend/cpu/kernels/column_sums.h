// Column sums of [N, D] rows (bias gradients) in an order that does not depend on the thread count: rows
// in fixed blocks of kSumBlockRows, each block's sums in row order into a partial [D], then the partials
// in block order. bias_backward sums rows that exist; a kernel that produces the rows (a gradient) sums
// them as it writes them, with the same bits. Internal linkage: each instruction-set variant compiles its
// own copy.
#pragma once

#include <algorithm>
#include <cstdint>

#include "backend/cpu/kernels/kernel_functions.h"

namespace tt::backend::cpu::TT_CPU_ISA {
namespace {

constexpr int64_t kSumBlockRows = 32;
constexpr int kSumPieceCols = 1024;  // a row goes in pieces that stay in L1 between producing and summing

// dbias[D] += the column sums of rows 0 .. N. row(i, j0, j1) returns where row i's columns [j0, j1) lie
// (it may compute and write them first: the piece is summed while still in L1). `cost`: work per element for
// threads_for.
template <class Row>
void sum_columns(const KernelContext& ctx, float* dbias, int64_t N, int D, int64_t cost, Row row) {
  const int64_t blocks = (N + kSumBlockRows - 1) / kSumBlockRows;
  float* partials = kernel_scratch(ctx, static_cast<size_t>(blocks) * static_cast<size_t>(D));
  const int nt = static_cast<int>(std::min<int64_t>(blocks, threads_for(ctx, cost * N * D)));
#pragma omp parallel num_threads(std::max(nt, 1))
  {
#pragma omp for schedule(static)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      float* partial = partials + blk * D;
      const int64_t r0 = blk * kSumBlockRows, r1 = std::min(N, r0 + kSumBlockRows);
      for (int64_t i = r0; i < r1; ++i)
        for (int j0 = 0; j0 < D; j0 += kSumPieceCols) {
          const int j1 = std::min(D, j0 + kSumPieceCols);
          const float* piece = row(i, j0, j1);
          float* acc = partial + j0;
          if (i == r0) {
            std::copy(piece, piece + (j1 - j0), acc);
            continue;
          }
#pragma omp simd
          for (int j = 0; j < j1 - j0; ++j) acc[j] += piece[j];
        }
    }
    // The partials in block order, threads splitting the columns 64 at a time.
#pragma omp for schedule(static)
    for (int j0 = 0; j0 < D; j0 += 64) {
      const int j1 = std::min(D, j0 + 64);
      float total[64] = {};
      for (int64_t blk = 0; blk < blocks; ++blk) {
        const float* acc = partials + blk * D;
#pragma omp simd
        for (int j = j0; j < j1; ++j) total[j - j0] += acc[j];
      }
      for (int j = j0; j < j1; ++j) dbias[j] += total[j - j0];
    }
  }
}

}  // namespace
}  // namespace tt::backend::cpu::TT_CPU_ISA
