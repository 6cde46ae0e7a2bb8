// Layer normalisation over the last dim D of x [N, D].
#pragma once

#include "backend/backend.h"
#include "tensor/arena.h"
#include "tensor/tensor.h"

namespace tt::ops {

// y = (x - mean) · rstd · gamma + beta; saves mean[N], rstd[N].
void layer_norm_forward(const tensor::Tensor& y, const tensor::Tensor& mean, const tensor::Tensor& rstd,
                        const tensor::Tensor& x, const tensor::Tensor& gamma, const tensor::Tensor& beta, float eps);
// dx assigned (may alias dy); dgamma, dbeta accumulated.
void layer_norm_backward(const tensor::Tensor& dx, const tensor::Tensor& dgamma, const tensor::Tensor& dbeta,
                         const tensor::Tensor& dy, const tensor::Tensor& x, const tensor::Tensor& mean,
                         const tensor::Tensor& rstd, const tensor::Tensor& gamma);

// The end of a post-LN sub-layer: sum = residual + dropout(x + bias) (bias may be undefined),
// y = LayerNorm(sum), mean and rstd saved; sum may alias x. One kernel where the backend fuses it, else
// composed below. mask: room for the dropout flags (see dropout_flags_tensor), or undefined.
void residual_layer_norm_forward(const tensor::Tensor& y, const tensor::Tensor& sum, const tensor::Tensor& mean,
                                 const tensor::Tensor& rstd, const tensor::Tensor& mask, const tensor::Tensor& x,
                                 const tensor::Tensor& bias,
                                 const tensor::Tensor& residual, const tensor::Tensor& gamma, const tensor::Tensor& beta,
                                 float eps, float p, backend::DropoutKey key);
// Its backward: dres = d(sum) (may alias dy) and dx = dropout mask · dres assigned; dgamma, dbeta and dbias
// (may be undefined) accumulated; mask as forward left it. dx may be a bf16 tensor (bf16 storage on: its
// only readers are products), then nothing of it is written in fp32.
void residual_layer_norm_backward(const tensor::Tensor& dres, const tensor::Tensor& dx, const tensor::Tensor& dgamma,
                                  const tensor::Tensor& dbeta, const tensor::Tensor& dbias, const tensor::Tensor& dy,
                                  const tensor::Tensor& sum, const tensor::Tensor& mean, const tensor::Tensor& rstd,
                                  const tensor::Tensor& mask, const tensor::Tensor& gamma, float p,
                                  backend::DropoutKey key);
// Room for the dropout flags of n elements where `be` fuses the residual norm (n bytes), else undefined.
tensor::Tensor dropout_flags_tensor(tensor::Arena& arena, backend::Backend& be, int64_t n);

// The residual norm pair composed from add_bias, dropout_add_forward and layer_norm_forward (backward:
// layer_norm_backward, dropout_backward, bias_backward), for a backend that does not fuse it; raw
// arguments as Backend::residual_layer_norm_forward / backward take them, less the flags.
void composed_residual_layer_norm_forward(backend::Backend& be, float* y, float* sum, float* mean, float* rstd,
                                          const float* x, const float* bias, const float* residual,
                                          const float* gamma, const float* beta, int64_t N, int D, float eps, float p,
                                          backend::DropoutKey key);
void composed_residual_layer_norm_backward(backend::Backend& be, float* dres, float* dx, float* dgamma, float* dbeta,
                                           float* dbias, const float* dy, const float* sum, const float* mean,
                                           const float* rstd, const float* gamma, int64_t N, int D, float p,
                                           backend::DropoutKey key);

}  // namespace tt::ops
