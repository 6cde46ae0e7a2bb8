// LayerNorm over d_model with learned gain (weight, init 1) and bias (init 0).
//   x, y [N, D]; Saved: the input and the per-row mean and 1/std (not the normalised output).
#pragma once

#include <string>

#include "backend/backend.h"
#include "nn/params.h"
#include "tensor/arena.h"

namespace tt::nn {

class LayerNorm {
 public:
  struct Saved {
    tensor::Tensor x, mean, rstd;
    tensor::Tensor mask;  // forward_residual with dropout: its flags (bytes), for backward_residual
  };

  void declare(ParameterSet& params, const std::string& prefix, int D, float eps);
  void bind(const ParameterSet& params);

  // y may not alias x when saved (backward needs x). Without `saved`, mean/rstd are arena temporaries.
  void forward(const tensor::Tensor& y, const tensor::Tensor& x, tensor::Arena& arena, Saved* saved) const;
  // dx assigned (may alias dy); dgamma, dbeta accumulated.
  void backward(const tensor::Tensor& dx, const tensor::Tensor& dy, const Saved& saved) const;

  // The end of a post-LN sub-layer in one kernel: sum = residual + dropout(x + bias) (bias may be
  // undefined; sum may alias x), y = LayerNorm(sum); saved->x = sum.
  void forward_residual(const tensor::Tensor& y, const tensor::Tensor& sum, const tensor::Tensor& x,
                        const tensor::Tensor& bias, const tensor::Tensor& residual, float p, backend::DropoutKey key,
                        tensor::Arena& arena, Saved* saved) const;
  // Its backward: dres = d(sum) (may alias dy) and dx = d(sub-layer output) assigned; dbias (may be
  // undefined), dgamma, dbeta accumulated.
  void backward_residual(const tensor::Tensor& dres, const tensor::Tensor& dx, const tensor::Tensor& dbias,
                         const tensor::Tensor& dy, const Saved& saved, float p, backend::DropoutKey key) const;

 private:
  int D_ = 0;
  float eps_ = 1e-5f;
  size_t gamma_index_ = 0, beta_index_ = 0;
  tensor::Tensor gamma_, beta_, dgamma_, dbeta_;
};

}  // namespace tt::nn
