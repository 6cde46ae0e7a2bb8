// Elementwise kernels and reductions.
//   add_bias:      y, x [N, D], bias [D]          bias_backward: dbias [D] += column sums of dy [N, D]
//   add/axpy/scale/sum_squares: flat [n]
#include <algorithm>

#include "backend/cpu/kernels/column_sums.h"
#include "backend/cpu/kernels/kernel_functions.h"

namespace tt::backend::cpu::TT_CPU_ISA {

void add_bias(const KernelContext& ctx, float* y, const float* x, const float* bias, int64_t N, int D) {
  int nt = threads_for(ctx, N * D);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    const float* xr = x + i * D;
    float* yr = y + i * D;
#pragma omp simd
    for (int j = 0; j < D; ++j) yr[j] = xr[j] + bias[j];
  }
}

void bias_backward(const KernelContext& ctx, float* dbias, const float* dy, int64_t N, int D) {
  // Whole rows, read as they lie in memory (column_sums.h); columns split between threads would read each
  // row in short pieces far apart, at half the memory bandwidth.
  sum_columns(ctx, dbias, N, D, 1, [dy, D](int64_t i, int j0, int) { return dy + i * D + j0; });
}

void add(const KernelContext& ctx, float* y, const float* a, const float* b, int64_t n) {
  int nt = threads_for(ctx, n);
#pragma omp parallel for simd num_threads(nt) schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void axpy(const KernelContext& ctx, float* y, float alpha, const float* x, int64_t n) {
  int nt = threads_for(ctx, n);
#pragma omp parallel for simd num_threads(nt) schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void scale(const KernelContext& ctx, float* x, float alpha, int64_t n) {
  int nt = threads_for(ctx, n);
#pragma omp parallel for simd num_threads(nt) schedule(static)
  for (int64_t i = 0; i < n; ++i) x[i] *= alpha;
}

double sum_squares(const KernelContext& ctx, const float* x, int64_t n) {
  // Float partials over 1024-element blocks (vectorised), accumulated in double across blocks.
  constexpr int64_t kBlock = 1024;
  int64_t blocks = (n + kBlock - 1) / kBlock;
  double total = 0.0;
  int nt = threads_for(ctx, n);
#pragma omp parallel for num_threads(nt) schedule(static) reduction(+ : total)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    int64_t i0 = blk * kBlock, i1 = std::min(n, i0 + kBlock);
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t i = i0; i < i1; ++i) s += x[i] * x[i];
    total += s;
  }
  return total;
}

}  // namespace tt::backend::cpu::TT_CPU_ISA
