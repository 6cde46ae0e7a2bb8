// Dropout kernels. Element i (flat index into the tensor) is kept iff philox_uniform(seed, stream, i) >= p
// (util/rng.h), kept values scaled by 1/(1-p): the same mask on any thread count and on CUDA.
//   dropout_forward / dropout_backward / dropout_add_forward: flat [n]
//   bias_relu_dropout_forward: y, x [N, F], bias [F]      relu_dropout_backward: flat [n]
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backend/cpu/kernels/bf16_row.h"
#include "backend/cpu/kernels/dropout_mask.h"
#include "backend/cpu/kernels/kernel_functions.h"

namespace tt::backend::cpu::TT_CPU_ISA {

void dropout_forward(const KernelContext& ctx, float* y, uint16_t* y16, const float* x, int64_t n, float p,
                     DropoutKey key) {
  if (p <= 0.0f) {
    if (y != x) std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
    if (y16) to_bf16_row(y16, y, n);
    return;
  }
  const float s = keep_scale(p);
  int64_t chunks = (n + kChunk - 1) / kChunk;
  int nt = threads_for(ctx, n * 8);  // Philox makes each element ~8x a plain copy
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    alignas(64) uint32_t buf[kChunk + 40];
    int64_t i0 = c * kChunk;
    int count = static_cast<int>(std::min<int64_t>(kChunk, n - i0));
    const uint32_t* w = dropout_words(buf, i0, count, key);
#pragma omp simd
    for (int k = 0; k < count; ++k) y[i0 + k] = x[i0 + k] * (util::uniform01(w[k]) >= p ? s : 0.0f);  // branch-free: vectorises
    if (y16) to_bf16_row(y16 + i0, y + i0, count);
  }
}

void dropout_backward(const KernelContext& ctx, float* dx, uint16_t* dx16, const float* dy, int64_t n, float p,
                      DropoutKey key) {
  dropout_forward(ctx, dx, dx16, dy, n, p, key);  // the same mask and scale: d(dropout(x))/dx is dropout itself
}

void dropout_add_forward(const KernelContext& ctx, float* y, const float* residual, const float* x, int64_t n, float p,
                                     DropoutKey key) {
  if (p <= 0.0f) {
    add(ctx, y, residual, x, n);
    return;
  }
  const float s = keep_scale(p);
  int64_t chunks = (n + kChunk - 1) / kChunk;
  int nt = threads_for(ctx, n * 8);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    alignas(64) uint32_t buf[kChunk + 40];
    int64_t i0 = c * kChunk;
    int count = static_cast<int>(std::min<int64_t>(kChunk, n - i0));
    const uint32_t* w = dropout_words(buf, i0, count, key);
#pragma omp simd
    for (int k = 0; k < count; ++k) y[i0 + k] = residual[i0 + k] + x[i0 + k] * (util::uniform01(w[k]) >= p ? s : 0.0f);
  }
}

void bias_relu_dropout_forward(const KernelContext& ctx, float* y, uint16_t* y16, const float* x, const float* bias,
                               int64_t N, int F, float p, DropoutKey key) {
  if (p <= 0.0f) {
    int nt = threads_for(ctx, N * F);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t i = 0; i < N; ++i) {
#pragma omp simd
      for (int j = 0; j < F; ++j) {
        float v = x[i * F + j] + bias[j];
        y[i * F + j] = std::max(v, 0.0f);
      }
      if (y16) to_bf16_row(y16 + i * F, y + i * F, F);
    }
    return;
  }
  const float s = keep_scale(p);
  int nt = threads_for(ctx, N * F * 8);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    alignas(64) uint32_t buf[kChunk + 40];
    for (int j0 = 0; j0 < F; j0 += kChunk) {
      int count = std::min(kChunk, F - j0);
      int64_t i0 = i * F + j0;
      const uint32_t* w = dropout_words(buf, i0, count, key);
#pragma omp simd
      for (int k = 0; k < count; ++k) {
        float v = std::max(x[i0 + k] + bias[j0 + k], 0.0f);
        y[i0 + k] = v * (util::uniform01(w[k]) >= p ? s : 0.0f);
      }
      if (y16) to_bf16_row(y16 + i0, y + i0, count);
    }
  }
}

void relu_dropout_backward(const KernelContext& ctx, float* dx, uint16_t* dx16, const float* dy, const float* y,
                           int64_t n, float p) {
  const float s = p > 0.0f ? keep_scale(p) : 1.0f;
  // In chunks, so that each is still in L1 when its bf16 copy is written.
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  int nt = threads_for(ctx, dx16 ? 2 * n : n);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t i0 = c * kChunk, i1 = std::min<int64_t>(n, i0 + kChunk);
#pragma omp simd
    for (int64_t i = i0; i < i1; ++i) dx[i] = dy[i] * (y[i] > 0.0f ? s : 0.0f);
    if (dx16) to_bf16_row(dx16 + i0, dx + i0, i1 - i0);
  }
}

}  // namespace tt::backend::cpu::TT_CPU_ISA
