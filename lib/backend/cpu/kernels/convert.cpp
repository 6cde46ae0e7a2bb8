// fp32 -> bf16 conversion of (strided) matrix operands for the bf16 matrix products (gemm_bf16.cpp).
//   x: a [batch1, batch2] grid of [rows, cols] matrices at strides s   y: the same grid, dense
// Rounding as kernels/bf16_row.h says.
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

}  // namespace tt::backend::cpu::TT_CPU_ISA
