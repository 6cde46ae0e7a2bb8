// Adam with bias correction and optional decoupled (AdamW) weight decay — the CPU backend's formula:
//   param, m, v, grad: flat [n]
//   param = param * (1 - lr * weight_decay) - (lr / bc1) * m / (sqrt(v) / sqrt(bc2) + eps)
// with bc1 = 1 - beta1^step, bc2 = 1 - beta2^step computed once on the host in double.
#include <cuda_bf16.h>

#include <cmath>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernel_utils.h"

namespace tt::backend {

using namespace cuda_kernels;

namespace {

__global__ void adam_kernel(float* param, float* m, float* v, const float* grad, int64_t n, float beta1,
                            float beta2, float eps, float step_size, float inv_sqrt_bc2, float decay,
                            __nv_bfloat16* param_bf16) {
  const float one_b1 = 1.0f - beta1, one_b2 = 1.0f - beta2;
  for (int64_t i = thread_index(); i < n; i += thread_stride()) {
    const float g = grad[i];
    const float mi = beta1 * m[i] + one_b1 * g;
    const float vi = beta2 * v[i] + one_b2 * g * g;
    m[i] = mi;
    v[i] = vi;
    const float denom = sqrtf(vi) * inv_sqrt_bc2 + eps;
    const float p = param[i] * decay - step_size * mi / denom;
    param[i] = p;
    if (param_bf16) param_bf16[i] = __float2bfloat16_rn(p);
  }
}

}  // namespace

void CudaBackend::adam_step(float* param, float* m, float* v, const float* grad, int64_t n, float lr, float beta1,
                            float beta2, float eps, float weight_decay, int64_t step, uint16_t* param_bf16) {
  if (n <= 0) return;
  const double bc1 = 1.0 - std::pow(static_cast<double>(beta1), static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(static_cast<double>(beta2), static_cast<double>(step));
  const float step_size = static_cast<float>(lr / bc1);
  const float inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2));
  const float decay = 1.0f - lr * weight_decay;
  adam_kernel<<<grid_for(n, kBlock), kBlock, 0, stream_.get()>>>(param, m, v, grad, n, beta1, beta2, eps, step_size,
                                                                inv_sqrt_bc2, decay,
                                                                reinterpret_cast<__nv_bfloat16*>(param_bf16));
  TT_CUDA_CHECK_LAUNCH();
}

}  // namespace tt::backend
