// Attention softmax (in place, masked) and row log-softmax.
//   scores, grad, probs: [B, H, Tq, Tk]   key_lengths: [B] (may be null)   log_softmax x: [N, V]
// Masked keys become -inf before the exp, whose result is then exactly 0 (fast_exp flushes below
// -87.3 to 0): padded and future weights are 0, not merely tiny.
#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/cpu/kernels/bf16_row.h"
#include "backend/cpu/kernels/kernel_functions.h"
#include "backend/cpu/kernels/lanes.h"
#include "backend/cpu/kernels/log_softmax_shift.h"
#include "backend/cpu/fast_math.h"

namespace tt::backend::cpu::TT_CPU_ISA {

void attention_softmax_forward(const KernelContext& ctx, float* scores, uint16_t* scores16, const int32_t* key_lengths,
                               int B, int H, int Tq, int Tk, float scale, bool causal, int query_offset) {
  const int64_t rows = static_cast<int64_t>(B) * H * Tq;
  int nt = threads_for(ctx, rows * Tk * 4);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int b = static_cast<int>(r / (static_cast<int64_t>(H) * Tq));
    const int q = static_cast<int>(r % Tq);
    int len = Tk;
    if (key_lengths) len = std::min(len, key_lengths[b]);
    if (causal) len = std::min(len, q + query_offset + 1);
    len = std::max(len, 1);  // every row keeps key 0
    float* s = scores + r * Tk;
    // Full-row loops with a fixed trip count (Tk), masked keys as -inf: they vectorise without
    // remainders on every row length, and exp(-inf) is exactly 0 there.
    const float neg_inf = -std::numeric_limits<float>::infinity();
#pragma omp simd
    for (int k = 0; k < Tk; ++k) s[k] = k < len ? s[k] * scale : neg_inf;
    // Reductions in lanes.h's registers (an `omp simd reduction` here spilled through the stack, and on
    // some runs cost ten times the arithmetic).
    const float mx = row_max(s, Tk);
#pragma omp simd
    for (int k = 0; k < Tk; ++k) s[k] = fast_exp_nonpositive(s[k] - mx);
    // The sum runs over the unmasked keys only: a reduction over the full row would group the same terms
    // differently for another padded length Tk, and a sentence's attention would depend on its batch.
    const float inv = 1.0f / row_sum(s, len);
#pragma omp simd
    for (int k = 0; k < Tk; ++k) s[k] *= inv;
    if (scores16) to_bf16_row(scores16 + r * Tk, s, Tk);
  }
}

void attention_softmax_backward(const KernelContext& ctx, float* grad, uint16_t* grad16, const float* probs, int B,
                                int H, int Tq, int Tk, float scale) {
  const int64_t rows = static_cast<int64_t>(B) * H * Tq;
  int nt = threads_for(ctx, rows * Tk * 2);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    float* g = grad + r * Tk;
    const float* p = probs + r * Tk;
    const float dot = row_dot(g, p, Tk);  // in registers, as the forward's sums
#pragma omp simd
    for (int k = 0; k < Tk; ++k) g[k] = scale * p[k] * (g[k] - dot);
    if (grad16) to_bf16_row(grad16 + r * Tk, g, Tk);
  }
}

void log_softmax(const KernelContext& ctx, float* x, int64_t N, int V) {
  int nt = threads_for(ctx, N * V * 4);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    float* row = x + i * V;
    const float shift = log_softmax_shift(row, V);
#pragma omp simd
    for (int k = 0; k < V; ++k) row[k] -= shift;
  }
}

}  // namespace tt::backend::cpu::TT_CPU_ISA
