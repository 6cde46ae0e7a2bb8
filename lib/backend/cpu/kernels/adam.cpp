// Adam with bias correction and optional decoupled (AdamW) weight decay.
//   param, m, v, grad: flat [n]
// param -= lr * (mhat / (sqrt(vhat) + eps) + weight_decay * param), with the weight decay applied to the
// parameter before this step's update (Loshchilov & Hutter; PyTorch AdamW). param_bf16: null, or the
// updated param rounded to bf16, written while its block is in L1 (bf16 training's copy of the weights).
#include <algorithm>
#include <cmath>

#include "backend/cpu/kernels/bf16_row.h"
#include "backend/cpu/kernels/kernel_functions.h"

namespace tt::backend::cpu::TT_CPU_ISA {

void adam_step(const KernelContext& ctx, float* param, float* m, float* v, const float* grad, int64_t n, float lr,
               float beta1, float beta2, float eps, float weight_decay, int64_t step, uint16_t* param_bf16) {
  // Bias corrections once, in double, on the host.
  const double bc1 = 1.0 - std::pow(static_cast<double>(beta1), static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(static_cast<double>(beta2), static_cast<double>(step));
  const float step_size = static_cast<float>(lr / bc1);
  const float inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2));
  const float decay = 1.0f - lr * weight_decay;
  const float one_b1 = 1.0f - beta1, one_b2 = 1.0f - beta2;
  const int nt = threads_for(ctx, n * 4);
  // Blocks that stay in L1 between the update and the bf16 copy of what it wrote.
  constexpr int64_t kBlock = 2048;
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
    const int64_t b1 = std::min(n, b0 + kBlock);
#pragma omp simd
    for (int64_t i = b0; i < b1; ++i) {
      const float g = grad[i];
      const float mi = beta1 * m[i] + one_b1 * g;
      const float vi = beta2 * v[i] + one_b2 * g * g;
      m[i] = mi;
      v[i] = vi;
      const float denom = std::sqrt(vi) * inv_sqrt_bc2 + eps;
      param[i] = param[i] * decay - step_size * mi / denom;
    }
    if (param_bf16) to_bf16_row(param_bf16 + b0, param + b0, b1 - b0);
  }
}

}  // namespace tt::backend::cpu::TT_CPU_ISA
