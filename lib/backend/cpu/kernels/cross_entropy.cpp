// Fused label-smoothed cross-entropy: loss, nll and the gradient in place of the logits.
//   logits: [N, V] (gradient on exit)   targets, loss, nll: [N]   grad16: null, or [N, V] (gradient in bf16)
// Per row: one read for max and sum(x), one pass writing exp(x - max) in place, one pass turning it
// into (softmax - q) * grad_scale, and for bf16 training its bf16 copy (a row still in cache, instead of a
// pass over [N, V] from memory before the output projection's backward). The [V] row stays in L1/L2
// between passes.
#include <algorithm>
#include <cmath>

#include "backend/cpu/kernels/bf16_row.h"
#include "backend/cpu/kernels/kernel_functions.h"
#include "backend/cpu/kernels/lanes.h"
#include "backend/cpu/fast_math.h"

namespace tt::backend::cpu::TT_CPU_ISA {

void cross_entropy_forward_backward(const KernelContext& ctx, float* loss, float* nll, float* logits, uint16_t* grad16,
                                    const int32_t* targets, int64_t N, int V, float eps, int32_t ignore_id,
                                    float grad_scale) {
  // Targets were range-checked by CpuBackend (one place for every instruction set).
  const float smooth = eps / static_cast<float>(V);
  int nt = threads_for(ctx, N * V * 4);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    float* x = logits + i * V;
    const int32_t t = targets[i];
    if (t == ignore_id) {
      loss[i] = 0.0f;
      nll[i] = 0.0f;
#pragma omp simd
      for (int k = 0; k < V; ++k) x[k] = 0.0f;
      if (grad16) std::fill(grad16 + i * V, grad16 + (i + 1) * V, uint16_t{0});
      continue;
    }
    // In vector lanes: GCC left this two-reduction loop scalar, one dependent add per logit (two thirds of
    // the kernel's time at V = 8000).
    float mx, sx;
    row_max_sum(x, V, &mx, &sx);
    const float xt = x[t];
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int k = 0; k < V; ++k) {
      float e = fast_exp_nonpositive(x[k] - mx);
      x[k] = e;
      sum += e;
    }
    const double lse = static_cast<double>(mx) + std::log(static_cast<double>(sum));
    const double logp_t = xt - lse;
    const double sum_logp = static_cast<double>(sx) - static_cast<double>(V) * lse;
    nll[i] = static_cast<float>(-logp_t);
    loss[i] = static_cast<float>(-(1.0 - eps) * logp_t - static_cast<double>(smooth) * sum_logp);
    const float a = grad_scale / sum, b = -smooth * grad_scale;
#pragma omp simd
    for (int k = 0; k < V; ++k) x[k] = std::fma(x[k], a, b);
    x[t] -= (1.0f - eps) * grad_scale;
    if (grad16) to_bf16_row(grad16 + i * V, x, V);
  }
}

}  // namespace tt::backend::cpu::TT_CPU_ISA
