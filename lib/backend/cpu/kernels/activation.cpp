// bias_activation_forward: y, x [N, F], bias [F]; y = act(x + bias) for swish and gelu (inference only).
// ReLU goes through bias_relu_dropout_forward, which also drops out and has a backward.
#include <cmath>

#include "backend/cpu/fast_math.h"
#include "backend/cpu/kernels/kernel_functions.h"

namespace tt::backend::cpu::TT_CPU_ISA {

void bias_activation_forward(const KernelContext& ctx, float* y, const float* x, const float* bias, int64_t N, int F,
                             Activation a) {
  // swish costs one exp (vectorised, fast_math.h), gelu one libm erf per element (not vectorised).
  const int nt = threads_for(ctx, N * F * (a == Activation::gelu ? 16 : 4));
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    const float* xi = x + i * F;
    float* yi = y + i * F;
    if (a == Activation::swish) {
#pragma omp simd
      for (int j = 0; j < F; ++j) {
        const float v = xi[j] + bias[j];
        yi[j] = v / (1.0f + fast_exp(-v));
      }
    } else if (a == Activation::gelu) {
      for (int j = 0; j < F; ++j) {
        const float v = xi[j] + bias[j];
        yi[j] = 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));
      }
    } else {
#pragma omp simd
      for (int j = 0; j < F; ++j) yi[j] = std::max(xi[j] + bias[j], 0.0f);
    }
  }
}

}  // namespace tt::backend::cpu::TT_CPU_ISA
