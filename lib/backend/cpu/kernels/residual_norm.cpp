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

#include "backend/cpu/kernels/bf16_row.h"
#include "backend/cpu/kernels/dropout_mask.h"
#include "backend/cpu/kernels/kernel_functions.h"
#include "backend/cpu/kernels/lanes.h"

namespace tt::backend::cpu::TT_CPU_ISA {
namespace {

constexpr int64_t kBlockRows = 32;

// f[0, n) = dropout factors (0 or 1/(1-p)) of flat elements [i0, i0 + n); mask (may be null) receives
// the kept flags for backward, which then reads them instead of drawing the words again (Philox is most
// of the cost of dropout).
void block_factors(float* f, uint8_t* mask, int64_t i0, int64_t n, float p, DropoutKey key) {
  const float s = keep_scale(p);
  const uint32_t thr = util::dropout_threshold(p);  // kept iff draw >= thr (util/rng.h)
  alignas(64) uint32_t buf[kChunk + 40];
  for (int64_t j0 = 0; j0 < n; j0 += kChunk) {
    const int count = static_cast<int>(std::min<int64_t>(kChunk, n - j0));
    const DrawHalf* d = dropout_draws(buf, i0 + j0, count, key);
#pragma omp simd
    for (int j = 0; j < count; ++j) f[j0 + j] = d[j] >= thr ? s : 0.0f;
  }
  if (mask) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) mask[j] = f[j] != 0.0f;
  }
}
void mask_factors(float* f, const uint8_t* mask, int64_t n, float p) {
  const float s = keep_scale(p);
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) f[j] = mask[j] ? s : 0.0f;
}

inline void store_lanes(float* x, const Lanes& v) { std::memcpy(x, &v, sizeof v); }

// One row of the forward: written with explicit lanes so that each sum is taken in the loop that produces
// its terms, in two alternating accumulators (a chain of dependent adds per row was the kernel's cost).
// kBias, kDrop: whether there is a bias, and dropout factors f.
template <bool kBias, bool kDrop>
void forward_row(float* yr, float* sr, float* mean, float* rstd, const float* xr, const float* rr, const float* bias,
                 const float* f, const float* gamma, const float* beta, int D, float eps) {
  Lanes a0 = {}, a1 = {};
  int j = 0;
  for (; j + kLanes <= D; j += kLanes) {
    Lanes v, r;
    load_lanes(v, xr + j);
    load_lanes(r, rr + j);
    if constexpr (kBias) {
      Lanes b;
      load_lanes(b, bias + j);
      v += b;
    }
    if constexpr (kDrop) {
      Lanes m;
      load_lanes(m, f + j);
      v *= m;
    }
    v += r;
    store_lanes(sr + j, v);  // sr may alias xr or rr: this block of both was read above
    if ((j / kLanes) % 2) a1 += v;
    else a0 += v;
  }
  a0 += a1;
  float total = fold<false>(a0);
  for (; j < D; ++j) {
    const float v = (kBias ? xr[j] + bias[j] : xr[j]) * (kDrop ? f[j] : 1.0f);
    sr[j] = rr[j] + v;
    total += sr[j];
  }
  // Mean, then the centred second moment (no E[x^2] - E[x]^2 cancellation), as layer_norm_forward.
  const float mu = total / static_cast<float>(D);
  a0 = Lanes{};
  a1 = Lanes{};
  for (j = 0; j + kLanes <= D; j += kLanes) {
    Lanes d;
    load_lanes(d, sr + j);
    d -= mu;
    if ((j / kLanes) % 2) a1 += d * d;
    else a0 += d * d;
  }
  a0 += a1;
  float q = fold<false>(a0);
  for (; j < D; ++j) q += (sr[j] - mu) * (sr[j] - mu);
  const float rs = 1.0f / std::sqrt(q / static_cast<float>(D) + eps);
#pragma omp simd
  for (j = 0; j < D; ++j) yr[j] = (sr[j] - mu) * rs * gamma[j] + beta[j];
  *mean = mu;
  *rstd = rs;
}

// One row of the backward; pg, pb, pd: the block's partial dgamma, dbeta, dbias.
template <bool kDrop>
void backward_row(float* dr, float* dxr, float* pg, float* pb, float* pd, const float* dyr, const float* sr,
                  const float* f, const float* gamma, float mu, float rs, int D) {
  // dsum = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma, xhat = (sum - mean) * rstd.
  Lanes g0 = {}, g1 = {}, x0 = {}, x1 = {};
  int j = 0;
  for (; j + kLanes <= D; j += kLanes) {
    Lanes dy, s, gm, acc_g, acc_b;
    load_lanes(dy, dyr + j);
    load_lanes(s, sr + j);
    load_lanes(gm, gamma + j);
    const Lanes xhat = (s - mu) * rs;
    const Lanes g = dy * gm;
    load_lanes(acc_g, pg + j);
    load_lanes(acc_b, pb + j);
    store_lanes(pg + j, acc_g + dy * xhat);
    store_lanes(pb + j, acc_b + dy);
    if ((j / kLanes) % 2) {
      g1 += g;
      x1 += g * xhat;
    } else {
      g0 += g;
      x0 += g * xhat;
    }
  }
  g0 += g1;
  x0 += x1;
  float sum_g = fold<false>(g0), sum_gx = fold<false>(x0);
  for (; j < D; ++j) {
    const float xhat = (sr[j] - mu) * rs, g = dyr[j] * gamma[j];
    pg[j] += dyr[j] * xhat;
    pb[j] += dyr[j];
    sum_g += g;
    sum_gx += g * xhat;
  }
  const float mg = sum_g / static_cast<float>(D), mgx = sum_gx / static_cast<float>(D);
#pragma omp simd
  for (j = 0; j < D; ++j) {
    const float xhat = (sr[j] - mu) * rs;
    const float d = rs * (dyr[j] * gamma[j] - mg - xhat * mgx);  // dr may alias dyr: read, then written
    dr[j] = d;
    const float dx = kDrop ? d * f[j] : d;
    dxr[j] = dx;
    pd[j] += dx;
  }
}

}  // namespace

void residual_layer_norm_forward(const KernelContext& ctx, float* y, uint16_t* y16, float* sum, float* mean, float* rstd, uint8_t* mask,
                                 const float* x, const float* bias, const float* residual, const float* gamma,
                                 const float* beta, int64_t N, int D, float eps, float p, DropoutKey key) {
  const int64_t blocks = (N + kBlockRows - 1) / kBlockRows;
  const int nt = static_cast<int>(std::min<int64_t>(blocks, threads_for(ctx, N * D * (p > 0.0f ? 8 : 2))));
  const size_t per_thread = p > 0.0f ? static_cast<size_t>(kBlockRows) * D : 0;
  float* scratch = per_thread ? kernel_scratch(ctx, per_thread * static_cast<size_t>(nt)) : nullptr;
  auto row = bias ? (p > 0.0f ? forward_row<true, true> : forward_row<true, false>)
                  : (p > 0.0f ? forward_row<false, true> : forward_row<false, false>);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t r0 = blk * kBlockRows, r1 = std::min(N, r0 + kBlockRows);
    float* factors = scratch ? scratch + per_thread * static_cast<size_t>(nt > 1 ? omp_get_thread_num() : 0) : nullptr;
    if (factors) block_factors(factors, mask ? mask + r0 * D : nullptr, r0 * D, (r1 - r0) * D, p, key);
    for (int64_t i = r0; i < r1; ++i) {
      row(y + i * D, sum + i * D, mean + i, rstd + i, x + i * D, residual + i * D, bias,
          factors ? factors + (i - r0) * D : nullptr, gamma, beta, D, eps);
      if (y16) to_bf16_row(y16 + i * D, y + i * D, D);
    }
  }
}

void residual_layer_norm_backward(const KernelContext& ctx, float* dres, float* dx, uint16_t* dx16, float* dgamma, float* dbeta,
                                  float* dbias, const float* dy, const float* sum, const float* mean, const float* rstd,
                                  const uint8_t* mask, const float* gamma, int64_t N, int D, float p, DropoutKey key) {
  const int64_t blocks = (N + kBlockRows - 1) / kBlockRows;
  const int nt = static_cast<int>(std::min<int64_t>(blocks, threads_for(ctx, N * D * (p > 0.0f ? 8 : 3))));
  // Per block: partial dgamma, dbeta, dbias [3][D]; per thread: the block's dropout factors, and when dx is
  // stored only in bf16 (dx null), the row's fp32 dx, rounded from L1 (it is never written to memory).
  const size_t partials = static_cast<size_t>(blocks) * 3 * D;
  const size_t factor_floats = p > 0.0f ? static_cast<size_t>(kBlockRows) * D : 0;
  const size_t per_thread = factor_floats + (dx ? 0 : static_cast<size_t>(D));
  float* scratch = kernel_scratch(ctx, partials + per_thread * static_cast<size_t>(nt));
  auto row = p > 0.0f ? backward_row<true> : backward_row<false>;
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t r0 = blk * kBlockRows, r1 = std::min(N, r0 + kBlockRows);
    float* pg = scratch + static_cast<size_t>(blk) * 3 * D;
    std::fill(pg, pg + 3 * D, 0.0f);
    float* own = scratch + partials + per_thread * static_cast<size_t>(nt > 1 ? omp_get_thread_num() : 0);
    float* factors = factor_floats ? own : nullptr;
    float* dx_row = own + factor_floats;
    if (factors && mask) mask_factors(factors, mask + r0 * D, (r1 - r0) * D, p);
    else if (factors) block_factors(factors, nullptr, r0 * D, (r1 - r0) * D, p, key);
    for (int64_t i = r0; i < r1; ++i) {
      float* dxr = dx ? dx + i * D : dx_row;
      row(dres + i * D, dxr, pg, pg + D, pg + 2 * D, dy + i * D, sum + i * D,
          factors ? factors + (i - r0) * D : nullptr, gamma, mean[i], rstd[i], D);
      if (dx16) to_bf16_row(dx16 + i * D, dxr, D);
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
