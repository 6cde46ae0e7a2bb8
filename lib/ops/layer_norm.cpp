#include "ops/layer_norm.h"

#include "util/check.h"

namespace tt::ops {

void layer_norm_forward(const tensor::Tensor& y, const tensor::Tensor& mean, const tensor::Tensor& rstd,
                        const tensor::Tensor& x, const tensor::Tensor& gamma, const tensor::Tensor& beta, float eps) {
  const int D = static_cast<int>(gamma.numel());
  const int64_t N = D ? x.numel() / D : 0;
  TT_CHECK_MSG(x.dim(x.shape().rank() - 1) == D && y.numel() == x.numel() && mean.numel() >= N &&
                   rstd.numel() >= N && beta.numel() == D,
               "layer_norm: x " + x.shape().str() + ", gamma " + gamma.shape().str());
  x.backend().layer_norm_forward(y.f32(), mean.f32(), rstd.f32(), x.f32(), gamma.f32(), beta.f32(), N, D, eps);
}

void layer_norm_backward(const tensor::Tensor& dx, const tensor::Tensor& dgamma, const tensor::Tensor& dbeta,
                         const tensor::Tensor& dy, const tensor::Tensor& x, const tensor::Tensor& mean,
                         const tensor::Tensor& rstd, const tensor::Tensor& gamma) {
  const int D = static_cast<int>(gamma.numel());
  const int64_t N = D ? x.numel() / D : 0;
  TT_CHECK(dx.numel() == x.numel() && dy.numel() == x.numel() && dgamma.numel() == D && dbeta.numel() == D);
  x.backend().layer_norm_backward(dx.f32(), dgamma.f32(), dbeta.f32(), dy.f32(), x.f32(), mean.f32(), rstd.f32(),
                                  gamma.f32(), N, D);
}

}  // namespace tt::ops
