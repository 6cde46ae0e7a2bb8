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

// The end of a post-LN sub-layer, fused: sum = residual + dropout(x + bias) (bias may be undefined),
// y = LayerNorm(sum), mean and rstd saved; sum may alias x. mask: room for the dropout flags (N * D
// bytes; see dropout_mask_tensor), or undefined.
void residual_layer_norm_forward(const tensor::Tensor& y, const tensor::Tensor& sum, const tensor::Tensor& mean,
                                 const tensor::Tensor& rstd, const tensor::Tensor& mask, const tensor::Tensor& x,
                                 const tensor::Tensor& bias,
                                 const tensor::Tensor& residual, const tensor::Tensor& gamma, const tensor::Tensor& beta,
                                 float eps, float p, backend::DropoutKey key);
// Its backward: dres = d(sum) (may alias dy) and dx = dropout mask · dres assigned; dgamma, dbeta and dbias
// (may be undefined) accumulated; mask as forward left it.
void residual_layer_norm_backward(const tensor::Tensor& dres, const tensor::Tensor& dx, const tensor::Tensor& dgamma,
                                  const tensor::Tensor& dbeta, const tensor::Tensor& dbias, const tensor::Tensor& dy,
                                  const tensor::Tensor& sum, const tensor::Tensor& mean, const tensor::Tensor& rstd,
                                  const tensor::Tensor& mask, const tensor::Tensor& gamma, float p,
                                  backend::DropoutKey key);
// A tensor of n bytes for dropout flags (an i32 tensor of ceil(n / 4) elements: the arena has no byte type).
tensor::Tensor dropout_mask_tensor(tensor::Arena& arena, int64_t n);

}  // namespace tt::ops
