#include "ops/elementwise.h"

#include <string>

#include "backend/bf16_storage.h"
#include "util/check.h"

namespace tt::ops {

namespace {

void same_size(const tensor::Tensor& a, const tensor::Tensor& b, const char* op) {
  TT_CHECK_MSG(a.numel() == b.numel(), std::string(op) + ": " + a.shape().str() + " vs " + b.shape().str());
}

int last_dim(const tensor::Tensor& t) { return static_cast<int>(t.dim(t.shape().rank() - 1)); }

}  // namespace

void add(const tensor::Tensor& y, const tensor::Tensor& a, const tensor::Tensor& b) {
  same_size(y, a, "add");
  same_size(a, b, "add");
  y.backend().add(y.f32(), a.f32(), b.f32(), y.numel());
}

void scale(const tensor::Tensor& x, float alpha) { x.backend().scale(x.f32(), alpha, x.numel()); }

double sum_squares(const tensor::Tensor& x) { return x.backend().sum_squares(x.f32(), x.numel()); }

void bias_relu_dropout_forward(const tensor::Tensor& y, const tensor::Tensor& x, const tensor::Tensor& bias,
                               float p, backend::DropoutKey key) {
  same_size(y, x, "bias_relu_dropout");
  const int F = static_cast<int>(bias.numel());
  TT_CHECK(last_dim(x) == F);
  if (y.dtype() == tensor::DType::bf16)
    backend::bf16_storage_of(y.backend(), "bias_relu_dropout_forward")
        .bias_relu_dropout_forward_bf16(y.bf16(), x.f32(), bias.f32(), x.numel() / F, F, p, key);
  else
    y.backend().bias_relu_dropout_forward(y.f32(), x.f32(), bias.f32(), x.numel() / F, F, p, key);
}

void bias_activation_forward(const tensor::Tensor& y, const tensor::Tensor& x, const tensor::Tensor& bias,
                             backend::Activation a) {
  same_size(y, x, "bias_activation");
  const int F = static_cast<int>(bias.numel());
  TT_CHECK(last_dim(x) == F);
  y.backend().bias_activation_forward(y.f32(), x.f32(), bias.f32(), x.numel() / F, F, a);
}

void relu_dropout_backward(const tensor::Tensor& dx, const tensor::Tensor& dy, const tensor::Tensor& y, float p,
                           const tensor::Tensor& dbias) {
  same_size(dx, dy, "relu_dropout_backward");
  same_size(dy, y, "relu_dropout_backward");
  const int F = dbias.defined() ? static_cast<int>(dbias.numel()) : static_cast<int>(last_dim(dy));
  TT_CHECK(last_dim(dy) == F);
  const int64_t N = dy.numel() / F;
  if (y.dtype() == tensor::DType::bf16) {
    backend::bf16_storage_of(dx.backend(), "relu_dropout_backward")
        .relu_dropout_backward_bf16(dx.f32(), dbias.defined() ? dbias.f32() : nullptr, dy.f32(), y.bf16(), N, F, p);
    return;
  }
  dx.backend().relu_dropout_backward(dx.f32(), dy.f32(), y.f32(), dy.numel(), p);
  if (dbias.defined()) dx.backend().bias_backward(dbias.f32(), dx.f32(), N, F);
}

void dropout_add_forward(const tensor::Tensor& y, const tensor::Tensor& residual, const tensor::Tensor& x, float p,
                         backend::DropoutKey key) {
  same_size(y, residual, "dropout_add");
  same_size(y, x, "dropout_add");
  y.backend().dropout_add_forward(y.f32(), residual.f32(), x.f32(), y.numel(), p, key);
}

void dropout_forward(const tensor::Tensor& y, const tensor::Tensor& x, float p, backend::DropoutKey key) {
  same_size(y, x, "dropout");
  y.backend().dropout_forward(y.f32(), x.f32(), y.numel(), p, key);
}

void dropout_backward(const tensor::Tensor& dx, const tensor::Tensor& dy, float p, backend::DropoutKey key) {
  same_size(dx, dy, "dropout_backward");
  dx.backend().dropout_backward(dx.f32(), dy.f32(), dy.numel(), p, key);
}

void round_to_bf16(const tensor::Tensor& y16, const tensor::Tensor& x) {
  same_size(y16, x, "round_to_bf16");
  const int64_t n = x.numel();
  if (n > 0)
    backend::bf16_storage_of(x.backend(), "round_to_bf16")
        .round_to_bf16(y16.bf16(), x.f32(), nullptr, 1, 1, 1, n, backend::MatrixStrides{n, n, n});
}

}  // namespace tt::ops
