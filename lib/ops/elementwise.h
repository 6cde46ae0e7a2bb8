// Elementwise ops: residual adds, fused bias + ReLU + dropout, dropout (+ residual), scaling, the
// gradient norm. (Linear adds its bias inside the GEMM path, so there is no separate bias front end.)
// Dropout masks come from a DropoutKey (util/rng.h): backward recomputes the mask instead of storing it.
#pragma once

#include "backend/backend.h"
#include "tensor/tensor.h"

namespace tt::ops {

// y = a + b (same element count). y may alias a or b.
void add(const tensor::Tensor& y, const tensor::Tensor& a, const tensor::Tensor& b);
// x *= alpha
void scale(const tensor::Tensor& x, float alpha);
// Sum of squares (host double).
double sum_squares(const tensor::Tensor& x);

// y = dropout(relu(x + bias)), x/y [N, F]; y may alias x. y may be bf16 (Backend::bf16_storage): then only
// the rounded result is written.
void bias_relu_dropout_forward(const tensor::Tensor& y, const tensor::Tensor& x, const tensor::Tensor& bias,
                               float p, backend::DropoutKey key);
// y = act(x + bias), x/y [N, F], fp32; y may alias x. Inference only (swish, gelu; relu as above).
void bias_activation_forward(const tensor::Tensor& y, const tensor::Tensor& x, const tensor::Tensor& bias,
                             backend::Activation a);
// dx = dy / (1-p) where y > 0, else 0 (assigned; dx may alias dy). y may be bf16, as forward left it.
// dbias (optional, [F] = dy's last dimension) += the column sums of dx: the bias gradient of the layer
// whose output went through the ReLU, fused into this pass where y is bf16.
void relu_dropout_backward(const tensor::Tensor& dx, const tensor::Tensor& dy, const tensor::Tensor& y, float p,
                           const tensor::Tensor& dbias = tensor::Tensor{});

// y = residual + dropout(x). y may alias residual or x.
void dropout_add_forward(const tensor::Tensor& y, const tensor::Tensor& residual, const tensor::Tensor& x, float p,
                         backend::DropoutKey key);
// y = dropout(x); dx = mask · dy / (1-p). In place allowed; p == 0 copies.
void dropout_forward(const tensor::Tensor& y, const tensor::Tensor& x, float p, backend::DropoutKey key);
void dropout_backward(const tensor::Tensor& dx, const tensor::Tensor& dy, float p, backend::DropoutKey key);

// y16 = bf16(x), y16 a bf16 tensor of x's size (Backend::bf16_storage).
void round_to_bf16(const tensor::Tensor& y16, const tensor::Tensor& x);

}  // namespace tt::ops
