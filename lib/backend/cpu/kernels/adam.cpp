// Adam with bias correction and optional decoupled (AdamW) weight decay.
//   param, m, v, grad: flat [n]
// param -= lr * (mhat / (sqrt(vhat) + eps) + weight_decay * param), with the weight decay applied to the
// parameter before this step's update (Loshchilov & Hutter; PyTorch AdamW).
#include <cmath>

#include "backend/cpu/kernels/kernel_functions.h"

namespace tt::backend::cpu::TT_CPU_ISA {

void adam_step(const KernelContext& ctx, float* param, float* m, float* v, const float* grad, int64_t n, float lr, float beta1,
                           float beta2, float eps, float weight_decay, int64_t step) {
  // Bias corrections once, in double, on the host.
  const double bc1 = 1.0 - std::pow(static_cast<double>(beta1), static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(static_cast<double>(beta2), static_cast<double>(step));
  const float step_size = static_cast<float>(lr / bc1);
  const float inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2));
  const float decay = 1.0f - lr * weight_decay;
  const float one_b1 = 1.0f - beta1, one_b2 = 1.0f - beta2;
  int nt = threads_for(ctx, n * 4);
#pragma omp parallel for simd num_threads(nt) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float g = grad[i];
    const float mi = beta1 * m[i] + one_b1 * g;
    const float vi = beta2 * v[i] + one_b2 * g * g;
    m[i] = mi;
    v[i] = vi;
    const float denom = std::sqrt(vi) * inv_sqrt_bc2 + eps;
    param[i] = param[i] * decay - step_size * mi / denom;
  }
}

}  // namespace tt::backend::cpu::TT_CPU_ISA
