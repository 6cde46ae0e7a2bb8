#include "ops/layer_norm.h"

#include <string>

#include "backend/bf16_storage.h"
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

namespace {

uint8_t* mask_bytes(const tensor::Tensor& mask, int64_t n) {
  if (!mask.defined()) return nullptr;
  TT_CHECK_MSG(mask.numel() >= n, "dropout flags of " + std::to_string(mask.numel()) + " bytes for " +
                                      std::to_string(n) + " elements");
  return mask.u8();
}

bool fused(const backend::Backend& be) { return be.fuses(backend::Backend::Fused::residual_layer_norm); }

}  // namespace

tensor::Tensor dropout_flags_tensor(tensor::Arena& arena, backend::Backend& be, int64_t n) {
  return fused(be) ? arena.allocate(tensor::Shape{n}, tensor::DType::u8) : tensor::Tensor{};
}

void composed_residual_layer_norm_forward(backend::Backend& be, float* y, float* sum, float* mean, float* rstd,
                                          const float* x, const float* bias, const float* residual,
                                          const float* gamma, const float* beta, int64_t N, int D, float eps, float p,
                                          backend::DropoutKey key) {
  const float* sub = x;
  if (bias) {
    be.add_bias(sum, x, bias, N, D);
    sub = sum;
  }
  be.dropout_add_forward(sum, residual, sub, N * D, p, key);
  be.layer_norm_forward(y, mean, rstd, sum, gamma, beta, N, D, eps);
}

void composed_residual_layer_norm_backward(backend::Backend& be, float* dres, float* dx, float* dgamma, float* dbeta,
                                           float* dbias, const float* dy, const float* sum, const float* mean,
                                           const float* rstd, const float* gamma, int64_t N, int D, float p,
                                           backend::DropoutKey key) {
  be.layer_norm_backward(dres, dgamma, dbeta, dy, sum, mean, rstd, gamma, N, D);
  be.dropout_backward(dx, dres, N * D, p, key);
  if (dbias) be.bias_backward(dbias, dx, N, D);
}

void residual_layer_norm_forward(const tensor::Tensor& y, const tensor::Tensor& sum, const tensor::Tensor& mean,
                                 const tensor::Tensor& rstd, const tensor::Tensor& mask, const tensor::Tensor& x,
                                 const tensor::Tensor& bias,
                                 const tensor::Tensor& residual, const tensor::Tensor& gamma, const tensor::Tensor& beta,
                                 float eps, float p, backend::DropoutKey key) {
  const int D = static_cast<int>(gamma.numel());
  const int64_t N = D ? x.numel() / D : 0;
  TT_CHECK_MSG(x.dim(x.shape().rank() - 1) == D && y.numel() == x.numel() && sum.numel() == x.numel() &&
                   residual.numel() == x.numel() && mean.numel() >= N && rstd.numel() >= N && beta.numel() == D &&
                   (!bias.defined() || bias.numel() == D),
               "residual layer_norm: x " + x.shape().str() + ", residual " + residual.shape().str() + ", gamma " +
                   gamma.shape().str());
  backend::Backend& be = x.backend();
  const float* b = bias.defined() ? bias.f32() : nullptr;
  if (fused(be))
    be.residual_layer_norm_forward(y.f32(), sum.f32(), mean.f32(), rstd.f32(), mask_bytes(mask, x.numel()), x.f32(), b,
                                   residual.f32(), gamma.f32(), beta.f32(), N, D, eps, p, key);
  else
    composed_residual_layer_norm_forward(be, y.f32(), sum.f32(), mean.f32(), rstd.f32(), x.f32(), b, residual.f32(),
                                         gamma.f32(), beta.f32(), N, D, eps, p, key);
}

void residual_layer_norm_backward(const tensor::Tensor& dres, const tensor::Tensor& dx, const tensor::Tensor& dgamma,
                                  const tensor::Tensor& dbeta, const tensor::Tensor& dbias, const tensor::Tensor& dy,
                                  const tensor::Tensor& sum, const tensor::Tensor& mean, const tensor::Tensor& rstd,
                                  const tensor::Tensor& mask, const tensor::Tensor& gamma, float p,
                                  backend::DropoutKey key) {
  const int D = static_cast<int>(gamma.numel());
  const int64_t N = D ? sum.numel() / D : 0;
  TT_CHECK(dres.numel() == sum.numel() && dx.numel() == sum.numel() && dy.numel() == sum.numel() &&
           dgamma.numel() == D && dbeta.numel() == D && (!dbias.defined() || dbias.numel() == D));
  backend::Backend& be = sum.backend();
  float* db = dbias.defined() ? dbias.f32() : nullptr;
  if (dx.dtype() == tensor::DType::bf16) {  // stored only in bf16: the sub-layer's products are its only readers
    backend::bf16_storage_of(be, "residual_layer_norm_backward")
        .residual_layer_norm_backward_bf16(dres.f32(), dx.bf16(), dgamma.f32(), dbeta.f32(), db, dy.f32(), sum.f32(),
                                           mean.f32(), rstd.f32(), mask_bytes(mask, sum.numel()), gamma.f32(), N, D, p,
                                           key);
    return;
  }
  TT_CHECK_MSG(dx.f32() != dres.f32() && dx.f32() != dy.f32(), "residual layer_norm backward: dx must not alias");
  if (fused(be))
    be.residual_layer_norm_backward(dres.f32(), dx.f32(), dgamma.f32(), dbeta.f32(), db, dy.f32(), sum.f32(),
                                    mean.f32(), rstd.f32(), mask_bytes(mask, sum.numel()), gamma.f32(), N, D, p, key);
  else
    composed_residual_layer_norm_backward(be, dres.f32(), dx.f32(), dgamma.f32(), dbeta.f32(), db, dy.f32(), sum.f32(),
                                          mean.f32(), rstd.f32(), gamma.f32(), N, D, p, key);
}

}  // namespace tt::ops
