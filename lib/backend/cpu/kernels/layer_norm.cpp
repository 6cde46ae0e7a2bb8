// Layer norm over the last dim.
//   x, y, dy, dx: [N, D]   gamma, beta, dgamma, dbeta: [D]   mean, rstd: [N] (saved by forward)
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "backend/cpu/kernels/bf16_row.h"
#include "backend/cpu/kernels/kernel_functions.h"

namespace tt::backend::cpu::TT_CPU_ISA {

void layer_norm_forward(const KernelContext& ctx, float* y, uint16_t* y16, float* mean, float* rstd, const float* x,
                        const float* gamma, const float* beta, int64_t N, int D, float eps) {
  int nt = threads_for(ctx, N * D * 2);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    const float* xr = x + i * D;
    float* yr = y + i * D;
    // Mean first, then the centred second moment: the row is in L1 for the second read, and the
    // two-pass variance does not cancel catastrophically as E[x^2] - E[x]^2 would.
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int j = 0; j < D; ++j) s += xr[j];
    float mu = s / static_cast<float>(D);
    float q = 0.0f;
#pragma omp simd reduction(+ : q)
    for (int j = 0; j < D; ++j) q += (xr[j] - mu) * (xr[j] - mu);
    float rs = 1.0f / std::sqrt(q / static_cast<float>(D) + eps);
#pragma omp simd
    for (int j = 0; j < D; ++j) yr[j] = (xr[j] - mu) * rs * gamma[j] + beta[j];
    if (y16) to_bf16_row(y16 + i * D, yr, D);
    mean[i] = mu;
    rstd[i] = rs;
  }
}

void layer_norm_backward(const KernelContext& ctx, float* dx, float* dgamma, float* dbeta, const float* dy, const float* x,
                                     const float* mean, const float* rstd, const float* gamma, int64_t N, int D) {
  // dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma; dgamma += sum dy*xhat, dbeta += sum dy.
  // Parameter sums go to per-thread partials (scratch) and are added up in thread order at the end.
  int nt = threads_for(ctx, N * D * 3);
  float* partial = kernel_scratch(ctx, static_cast<size_t>(nt) * 2 * D);
  std::fill(partial, partial + static_cast<size_t>(nt) * 2 * D, 0.0f);
#pragma omp parallel num_threads(nt)
  {
    int tid = nt > 1 ? omp_get_thread_num() : 0;
    float* pg = partial + static_cast<size_t>(tid) * 2 * D;
    float* pb = pg + D;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < N; ++i) {
      const float* xr = x + i * D;
      const float* dyr = dy + i * D;
      float* dxr = dx + i * D;
      const float mu = mean[i], rs = rstd[i];
      float sum_g = 0.0f, sum_gx = 0.0f;
#pragma omp simd reduction(+ : sum_g, sum_gx)
      for (int j = 0; j < D; ++j) {
        float xhat = (xr[j] - mu) * rs;
        float g = dyr[j] * gamma[j];
        sum_g += g;
        sum_gx += g * xhat;
        pg[j] += dyr[j] * xhat;
        pb[j] += dyr[j];
      }
      const float mg = sum_g / static_cast<float>(D), mgx = sum_gx / static_cast<float>(D);
#pragma omp simd
      for (int j = 0; j < D; ++j) {
        float xhat = (xr[j] - mu) * rs;
        dxr[j] = rs * (dyr[j] * gamma[j] - mg - xhat * mgx);  // dx may alias dy: read before write
      }
    }
  }
  for (int t = 0; t < nt; ++t) {
    const float* pg = partial + static_cast<size_t>(t) * 2 * D;
    const float* pb = pg + D;
#pragma omp simd
    for (int j = 0; j < D; ++j) {
      dgamma[j] += pg[j];
      dbeta[j] += pb[j];
    }
  }
}

}  // namespace tt::backend::cpu::TT_CPU_ISA
