// The end of a post-LN sub-layer in one pass per row, and its backward:
//   forward:  sum = residual + dropout(x + bias);  y = LayerNorm(sum)
//   backward: dres = d(sum) = LayerNorm'(dy);  dx = dropout mask * dres;  dgamma, dbeta, dbias += ...
//   x, residual, sum, y, dy, dres, dx: [N, D]   bias, gamma, beta and their gradients: [D]   mean, rstd: [N]
// Three kernels (bias, dropout + residual, layer norm) and three passes over [N, D] become one; the row
// stays in L1 between its reads. Rows go in fixed blocks of kBlockRows: the dropout words of a block come
// in one vectorised run, and the parameter gradients are summed per block and then over blocks in order,
// so they do not depend on the thread count.
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "backend/cpu/kernels/dropout_mask.h"
#include "backend/cpu/kernels/kernel_functions.h"
#include "backend/cpu/kernels/lanes.h"

namespace tt::backend::cpu::TT_CPU_ISA {
namespace {

constexpr int64_t kBlockRows = 32;

// f[0, n) = dropout factors (0 or 1/(1-p)) of flat elements [i0, i0 + n).
void block_factors(float* f, int64_t i0, int64_t n, float p, DropoutKey key) {
  const float s = keep_scale(p);
  alignas(64) uint32_t buf[kChunk + 40];
  for (int64_t j0 = 0; j0 < n; j0 += kChunk) {
    const int count = static_cast<int>(std::min<int64_t>(kChunk, n - j0));
    const uint32_t* w = dropout_words(buf, i0 + j0, count, key);
#pragma omp simd
    for (int j = 0; j < count; ++j) f[j0 + j] = util::uniform01(w[j]) >= p ? s : 0.0f;
  }
}

}  // namespace

void residual_layer_norm_forward(const KernelContext& ctx, float* y, float* sum, float* mean, float* rstd, const float* x,
                                 const float* bias, const float* residual, const float* gamma, const float* beta,
                                 int64_t N, int D, float eps, float p, DropoutKey key) {
  const int64_t blocks = (N + kBlockRows - 1) / kBlockRows;
  const int nt = static_cast<int>(std::min<int64_t>(blocks, threads_for(ctx, N * D * (p > 0.0f ? 8 : 2))));
  const size_t per_thread = p > 0.0f ? static_cast<size_t>(kBlockRows) * D : 0;
  float* scratch = per_thread ? kernel_scratch(ctx, per_thread * static_cast<size_t>(nt)) : nullptr;
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t r0 = blk * kBlockRows, r1 = std::min(N, r0 + kBlockRows);
    float* factors = scratch ? scratch + per_thread * static_cast<size_t>(nt > 1 ? omp_get_thread_num() : 0) : nullptr;
    if (factors) block_factors(factors, r0 * D, (r1 - r0) * D, p, key);
    for (int64_t i = r0; i < r1; ++i) {
      const float* xr = x + i * D;
      const float* rr = residual + i * D;
      const float* fr = factors ? factors + (i - r0) * D : nullptr;
      float* sr = sum + i * D;  // may alias x or residual: each element is read before it is written
#pragma omp simd
      for (int j = 0; j < D; ++j) {
        const float v = bias ? xr[j] + bias[j] : xr[j];
        sr[j] = rr[j] + (fr ? v * fr[j] : v);
      }
      // Mean, then the centred second moment (no E[x^2] - E[x]^2 cancellation), as layer_norm_forward.
      const float mu = row_sum(sr, D) / static_cast<float>(D);
      float* yr = y + i * D;
#pragma omp simd
      for (int j = 0; j < D; ++j) yr[j] = sr[j] - mu;
      const float rs = 1.0f / std::sqrt(row_dot(yr, yr, D) / static_cast<float>(D) + eps);
#pragma omp simd
      for (int j = 0; j < D; ++j) yr[j] = yr[j] * rs * gamma[j] + beta[j];
      mean[i] = mu;
      rstd[i] = rs;
    }
  }
}

void residual_layer_norm_backward(const KernelContext& ctx, float* dres, float* dx, float* dgamma, float* dbeta,
                                  float* dbias, const float* dy, const float* sum, const float* mean, const float* rstd,
                                  const float* gamma, int64_t N, int D, float p, DropoutKey key) {
  const int64_t blocks = (N + kBlockRows - 1) / kBlockRows;
  const int nt = static_cast<int>(std::min<int64_t>(blocks, threads_for(ctx, N * D * (p > 0.0f ? 8 : 3))));
  // Per block: partial dgamma, dbeta, dbias [3][D]; per thread: the block's dropout factors.
  const size_t partials = static_cast<size_t>(blocks) * 3 * D;
  const size_t per_thread = p > 0.0f ? static_cast<size_t>(kBlockRows) * D : 0;
  float* scratch = kernel_scratch(ctx, partials + per_thread * static_cast<size_t>(nt));
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t r0 = blk * kBlockRows, r1 = std::min(N, r0 + kBlockRows);
    float* pg = scratch + static_cast<size_t>(blk) * 3 * D;
    float* pb = pg + D;
    float* pd = pb + D;
    std::fill(pg, pg + 3 * D, 0.0f);
    float* factors = per_thread ? scratch + partials + per_thread * static_cast<size_t>(nt > 1 ? omp_get_thread_num() : 0)
                                : nullptr;
    if (factors) block_factors(factors, r0 * D, (r1 - r0) * D, p, key);
    for (int64_t i = r0; i < r1; ++i) {
      const float* sr = sum + i * D;
      const float* dyr = dy + i * D;
      const float mu = mean[i], rs = rstd[i];
      // dsum = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma, xhat = (sum - mean) * rstd.
      float* dr = dres + i * D;  // may alias dy: dy's row is read whole (the sums) before it is written
      float* dxr = dx + i * D;
#pragma omp simd
      for (int j = 0; j < D; ++j) {
        const float xhat = (sr[j] - mu) * rs;
        pg[j] += dyr[j] * xhat;
        pb[j] += dyr[j];
        dxr[j] = dyr[j] * gamma[j];  // g, for now
      }
      const float sum_g = row_sum(dxr, D);
      float sum_gx = 0.0f;
      {
        // sum of g * xhat, in the lanes of row_dot: xhat is formed on the fly into dr (overwritten next).
#pragma omp simd
        for (int j = 0; j < D; ++j) dr[j] = (sr[j] - mu) * rs;
        sum_gx = row_dot(dxr, dr, D);
      }
      const float mg = sum_g / static_cast<float>(D), mgx = sum_gx / static_cast<float>(D);
      const float* fr = factors ? factors + (i - r0) * D : nullptr;
#pragma omp simd
      for (int j = 0; j < D; ++j) {
        const float d = rs * (dxr[j] - mg - dr[j] * mgx);
        dr[j] = d;
        dxr[j] = fr ? d * fr[j] : d;
        pd[j] += dxr[j];
      }
    }
  }
  // Blocks in order: the same sums on any thread count.
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const float* pg = scratch + static_cast<size_t>(blk) * 3 * D;
#pragma omp simd
    for (int j = 0; j < D; ++j) {
      dgamma[j] += pg[j];
      dbeta[j] += pg[D + j];
    }
    if (dbias) {
#pragma omp simd
      for (int j = 0; j < D; ++j) dbias[j] += pg[2 * D + j];
    }
  }
}

}  // namespace tt::backend::cpu::TT_CPU_ISA
