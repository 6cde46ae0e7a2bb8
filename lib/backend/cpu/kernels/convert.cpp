// fp32 -> bf16 conversion of (strided) matrix operands for the bf16 matrix products (gemm_bf16.cpp).
//   x: a [batch1, batch2] grid of [rows, cols] matrices at strides s   y: the same grid, dense
// Round to nearest even, as the hardware's vcvtneps2bf16 does; NaN stays a (quiet) NaN. An integer loop
// the compiler vectorises for each variant.
#include <cstring>

#include "backend/cpu/kernels/kernel_functions.h"

namespace tt::backend::cpu::TT_CPU_ISA {
namespace {

inline void convert_row(uint16_t* __restrict y, const float* __restrict x, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, x + i, sizeof u);
    const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    y[i] = static_cast<uint16_t>(nan ? ((u >> 16) | 0x40u) : rounded);
  }
}

}  // namespace

void convert_to_bf16(const KernelContext& ctx, uint16_t* y, const float* x, int batch1, int batch2, int64_t rows,
                     int64_t cols, MatrixStrides s) {
  const int64_t total_rows = int64_t{batch1} * batch2 * rows;
  const int nt = threads_for(ctx, total_rows * cols);
  if (s.ld == cols && (batch2 == 1 || s.batch2 == rows * cols) && (batch1 == 1 || s.batch1 == batch2 * rows * cols)) {
    // Dense: one flat pass split evenly over the threads.
    const int64_t n = total_rows * cols, chunk = (n + nt - 1) / nt;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; ++t) {
      const int64_t begin = t * chunk, end = std::min(n, begin + chunk);
      if (begin < end) convert_row(y + begin, x + begin, end - begin);
    }
    return;
  }
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t r = 0; r < total_rows; ++r) {
    const int64_t i = r / rows, row = r % rows, i1 = i / batch2, i2 = i % batch2;
    convert_row(y + r * cols, x + i1 * s.batch1 + i2 * s.batch2 + row * s.ld, cols);
  }
}

}  // namespace tt::backend::cpu::TT_CPU_ISA
