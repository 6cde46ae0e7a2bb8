#include "nn/layer_norm.h"

#include "ops/layer_norm.h"

namespace tt::nn {

void LayerNorm::declare(ParameterSet& params, const std::string& prefix, int D, float eps) {
  D_ = D;
  eps_ = eps;
  gamma_index_ = params.declare(prefix + ".weight", tensor::Shape{D});
  beta_index_ = params.declare(prefix + ".bias", tensor::Shape{D});
}

void LayerNorm::bind(const ParameterSet& params) {
  gamma_ = params[gamma_index_].value;
  dgamma_ = params[gamma_index_].grad;
  beta_ = params[beta_index_].value;
  dbeta_ = params[beta_index_].grad;
}

void LayerNorm::forward(const tensor::Tensor& y, const tensor::Tensor& x, tensor::Arena& arena, Saved* saved) const {
  const int64_t N = x.numel() / D_;
  tensor::Tensor mean = arena.allocate(tensor::Shape{N});
  tensor::Tensor rstd = arena.allocate(tensor::Shape{N});
  ops::layer_norm_forward(y, mean, rstd, x, gamma_, beta_, eps_);
  if (saved) *saved = Saved{x, mean, rstd, {}};
}

void LayerNorm::backward(const tensor::Tensor& dx, const tensor::Tensor& dy, const Saved& saved) const {
  ops::layer_norm_backward(dx, dgamma_, dbeta_, dy, saved.x, saved.mean, saved.rstd, gamma_);
}

void LayerNorm::forward_residual(const tensor::Tensor& y, const tensor::Tensor& sum, const tensor::Tensor& x,
                                 const tensor::Tensor& bias, const tensor::Tensor& residual, float p,
                                 backend::DropoutKey key, tensor::Arena& arena, Saved* saved) const {
  const int64_t N = x.numel() / D_;
  tensor::Tensor mean = arena.allocate(tensor::Shape{N});
  tensor::Tensor rstd = arena.allocate(tensor::Shape{N});
  // The dropout flags are kept only for a backward (saved) that needs them (p > 0).
  tensor::Tensor mask =
      saved && p > 0 ? ops::dropout_flags_tensor(arena, x.backend(), x.numel()) : tensor::Tensor{};
  ops::residual_layer_norm_forward(y, sum, mean, rstd, mask, x, bias, residual, gamma_, beta_, eps_, p, key);
  if (saved) *saved = Saved{sum, mean, rstd, mask};
}

void LayerNorm::backward_residual(const tensor::Tensor& dres, const tensor::Tensor& dx, const tensor::Tensor& dbias,
                                  const tensor::Tensor& dy, const Saved& saved, float p,
                                  backend::DropoutKey key) const {
  ops::residual_layer_norm_backward(dres, dx, dgamma_, dbeta_, dbias, dy, saved.x, saved.mean, saved.rstd, saved.mask,
                                    gamma_, p, key);
}

}  // namespace tt::nn
