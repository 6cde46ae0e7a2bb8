// fp32 -> bf16 conversion of (strided) matrix operands for the bf16 matrix products (gemm_bf16.cpp).
//   x: a [batch1, batch2] grid of [rows, cols] matrices at strides s   y: the same grid, dense
// Rounding as kernels/bf16_row.h says. convert_to_bf16_with_bias: the same of x + bias.
#include <algorithm>

#include "backend/cpu/kernels/bf16_row.h"

namespace tt::backend::cpu::TT_CPU_ISA {

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
      if (begin < end) to_bf16_row(y + begin, x + begin, end - begin);
    }
    return;
  }
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t r = 0; r < total_rows; ++r) {
    const int64_t i = r / rows, row = r % rows, i1 = i / batch2, i2 = i % batch2;
    to_bf16_row(y + r * cols, x + i1 * s.batch1 + i2 * s.batch2 + row * s.ld, cols);
  }
}

// The projections' bias added on the way (bf16 training stores q, k, v only rounded: their fp32 values
// with the bias are never needed, so the bias costs no pass of its own), the fp32 sum rounded exactly as
// convert_to_bf16 rounds it.
void convert_to_bf16_with_bias(const KernelContext& ctx, uint16_t* y, const float* x, const float* bias, int batch1,
                               int batch2, int64_t rows, int64_t cols, MatrixStrides s) {
  const int64_t total_rows = int64_t{batch1} * batch2 * rows;
  const int nt = threads_for(ctx, 2 * total_rows * cols);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t r = 0; r < total_rows; ++r) {
    const int64_t i = r / rows, row = r % rows, i1 = i / batch2, i2 = i % batch2;
    const float* xr = x + i1 * s.batch1 + i2 * s.batch2 + row * s.ld;
    const float* b = bias + i2 * cols;
    // Through a piece of stack: one loop adding, then the row conversion (a single loop doing both
    // vectorised worse, 1.4x slower on Zen 4).
    alignas(64) float sum[256];
    for (int64_t c0 = 0; c0 < cols; c0 += 256) {
      const int64_t n = std::min<int64_t>(256, cols - c0);
#pragma omp simd
      for (int64_t c = 0; c < n; ++c) sum[c] = xr[c0 + c] + b[c0 + c];
      to_bf16_row(y + r * cols + c0, sum, n);
    }
  }
}

}  // namespace tt::backend::cpu::TT_CPU_ISA
