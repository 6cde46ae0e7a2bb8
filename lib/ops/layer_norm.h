// Layer normalisation over the last dim D of x [N, D].
#pragma once

#include "tensor/tensor.h"

namespace tt::ops {

// y = (x - mean) · rstd · gamma + beta; saves mean[N], rstd[N].
void layer_norm_forward(const tensor::Tensor& y, const tensor::Tensor& mean, const tensor::Tensor& rstd,
                        const tensor::Tensor& x, const tensor::Tensor& gamma, const tensor::Tensor& beta, float eps);
// dx assigned (may alias dy); dgamma, dbeta accumulated.
void layer_norm_backward(const tensor::Tensor& dx, const tensor::Tensor& dgamma, const tensor::Tensor& dbeta,
                         const tensor::Tensor& dy, const tensor::Tensor& x, const tensor::Tensor& mean,
                         const tensor::Tensor& rstd, const tensor::Tensor& gamma);

}  // namespace tt::ops
