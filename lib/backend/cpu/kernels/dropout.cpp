// Dropout kernels. Element i (flat index into the tensor) is kept iff util::dropout_keep(seed, stream, i, p)
// (util/rng.h), kept values scaled by 1/(1-p): the same mask on any thread count and on CUDA.
//   dropout_forward / dropout_backward / dropout_add_forward: flat [n]
//   bias_relu_dropout_forward: y, x [N, F], bias [F]      relu_dropout_backward: flat [n]
//   relu_dropout_backward_bf16: dx, dy, y16 [N, F], dbias [F]
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backend/cpu/kernels/bf16_row.h"
#include "backend/cpu/kernels/column_sums.h"
#include "backend/cpu/kernels/dropout_mask.h"
#include "backend/cpu/kernels/kernel_functions.h"

namespace tt::backend::cpu::TT_CPU_ISA {

// y null: only y16 is written (Backend::dropout_forward_bf16), each piece going through a stack buffer.
void dropout_forward(const KernelContext& ctx, float* y, uint16_t* y16, const float* x, int64_t n, float p,
                     DropoutKey key) {
  if (p <= 0.0f) {
    if (y && y != x) std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
    if (y16) to_bf16_row(y16, x, n);
    return;
  }
  const float s = keep_scale(p);
  const uint32_t thr = util::dropout_threshold(p);  // kept iff draw >= thr (util/rng.h)
  int64_t chunks = (n + kChunk - 1) / kChunk;
  int nt = threads_for(ctx, n * 8);  // Philox makes each element ~8x a plain copy
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    alignas(64) uint32_t buf[kChunk + 40];
    alignas(64) float piece[kChunk];
    int64_t i0 = c * kChunk;
    int count = static_cast<int>(std::min<int64_t>(kChunk, n - i0));
    float* out = y ? y + i0 : piece;
    const DrawHalf* d = dropout_draws(buf, i0, count, key);
#pragma omp simd  // branch-free: vectorises
    for (int k = 0; k < count; ++k) out[k] = x[i0 + k] * (d[k] >= thr ? s : 0.0f);
    if (y16) to_bf16_row(y16 + i0, out, count);
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
  const uint32_t thr = util::dropout_threshold(p);  // kept iff draw >= thr (util/rng.h)
  int64_t chunks = (n + kChunk - 1) / kChunk;
  int nt = threads_for(ctx, n * 8);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    alignas(64) uint32_t buf[kChunk + 40];
    int64_t i0 = c * kChunk;
    int count = static_cast<int>(std::min<int64_t>(kChunk, n - i0));
    const DrawHalf* d = dropout_draws(buf, i0, count, key);
#pragma omp simd
    for (int k = 0; k < count; ++k) y[i0 + k] = residual[i0 + k] + x[i0 + k] * (d[k] >= thr ? s : 0.0f);
  }
}

// y null: only y16 is written (Backend::bias_relu_dropout_forward_bf16), each piece going through a stack
// buffer instead of the [N, F] fp32 output.
void bias_relu_dropout_forward(const KernelContext& ctx, float* y, uint16_t* y16, const float* x, const float* bias,
                               int64_t N, int F, float p, DropoutKey key) {
  const float s = p > 0.0f ? keep_scale(p) : 1.0f;
  const uint32_t thr = util::dropout_threshold(p);  // kept iff draw >= thr (util/rng.h)
  int nt = threads_for(ctx, p > 0.0f ? N * F * 8 : N * F);  // Philox makes each element ~8x a plain pass
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    alignas(64) uint32_t buf[kChunk + 40];
    alignas(64) float piece[kChunk];
    for (int j0 = 0; j0 < F; j0 += kChunk) {
      const int count = std::min(kChunk, F - j0);
      const int64_t i0 = i * F + j0;
      float* out = y ? y + i0 : piece;
      if (p > 0.0f) {
        const DrawHalf* d = dropout_draws(buf, i0, count, key);
#pragma omp simd
        for (int k = 0; k < count; ++k) {
          float v = std::max(x[i0 + k] + bias[j0 + k], 0.0f);
          out[k] = v * (d[k] >= thr ? s : 0.0f);
        }
      } else {
#pragma omp simd
        for (int k = 0; k < count; ++k) out[k] = std::max(x[i0 + k] + bias[j0 + k], 0.0f);
      }
      if (y16) to_bf16_row(y16 + i0, out, count);
    }
  }
}

namespace {

// dx = dy * s where active(i), else 0; in chunks, so that each is still in L1 when its bf16 copy is written.
template <class Active>
void relu_dropout_backward_where(const KernelContext& ctx, float* dx, uint16_t* dx16, const float* dy, int64_t n,
                                 float p, Active active) {
  const float s = p > 0.0f ? keep_scale(p) : 1.0f;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  int nt = threads_for(ctx, dx16 ? 2 * n : n);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t i0 = c * kChunk, i1 = std::min<int64_t>(n, i0 + kChunk);
#pragma omp simd
    for (int64_t i = i0; i < i1; ++i) dx[i] = dy[i] * (active(i) ? s : 0.0f);
    if (dx16) to_bf16_row(dx16 + i0, dx + i0, i1 - i0);
  }
}

}  // namespace

void relu_dropout_backward(const KernelContext& ctx, float* dx, uint16_t* dx16, const float* dy, const float* y,
                           int64_t n, float p) {
  relu_dropout_backward_where(ctx, dx, dx16, dy, n, p, [y](int64_t i) { return y[i] > 0.0f; });
}

namespace {

// dx = dy * s where y16 > 0, else 0, for n elements (dx may be dy). A function of its own: inside the
// lambda below GCC left this loop scalar, with a branch per element (10x slower).
void relu_dropout_piece(float* dx, const float* dy, const uint16_t* y16, int n, float s) {
  const int16_t* y = reinterpret_cast<const int16_t*>(y16);
#pragma omp simd
  for (int j = 0; j < n; ++j) dx[j] = dy[j] * (y[j] > 0 ? s : 0.0f);
}

}  // namespace

// A bf16 value is > 0 iff its bits, read as a signed 16-bit integer, are: sign clear and not +0. The bias
// gradient (dbias not null) is summed from each row while it is in L1, in column_sums.h's order: the bits
// of bias_backward(dx) without its pass over [N, F].
void relu_dropout_backward_bf16(const KernelContext& ctx, float* dx, uint16_t* dx16, float* dbias, const float* dy,
                                const uint16_t* y16, int64_t N, int F, float p) {
  auto active = [y16](int64_t i) { return static_cast<int16_t>(y16[i]) > 0; };
  if (!dbias) {
    relu_dropout_backward_where(ctx, dx, dx16, dy, N * F, p, active);
    return;
  }
  const float s = p > 0.0f ? keep_scale(p) : 1.0f;
  sum_columns(ctx, dbias, N, F, 2, [=](int64_t i, int j0, int j1) {
    const int64_t at = i * F + j0;
    relu_dropout_piece(dx + at, dy + at, y16 + at, j1 - j0, s);
    if (dx16) to_bf16_row(dx16 + at, dx + at, j1 - j0);
    return dx + at;
  });
}

}  // namespace tt::backend::cpu::TT_CPU_ISA
