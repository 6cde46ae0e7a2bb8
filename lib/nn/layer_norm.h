// LayerNorm over d_model with learned gain (weight, init 1) and bias (init 0).
//   x, y [N, D]; Saved: the input and the per-row mean and 1/std (not the normalised output).
#pragma once

#include <string>

#include "nn/params.h"
#include "tensor/arena.h"

namespace tt::nn {

class LayerNorm {
 public:
  struct Saved {
    tensor::Tensor x, mean, rstd;
  };

  void declare(ParameterSet& params, const std::string& prefix, int D, float eps);
  void bind(const ParameterSet& params);

  // y may not alias x when saved (backward needs x). Without `saved`, mean/rstd are arena temporaries.
  void forward(const tensor::Tensor& y, const tensor::Tensor& x, tensor::Arena& arena, Saved* saved) const;
  // dx assigned (may alias dy); dgamma, dbeta accumulated.
  void backward(const tensor::Tensor& dx, const tensor::Tensor& dy, const Saved& saved) const;

 private:
  int D_ = 0;
  float eps_ = 1e-5f;
  size_t gamma_index_ = 0, beta_index_ = 0;
  tensor::Tensor gamma_, beta_, dgamma_, dbeta_;
};

}  // namespace tt::nn
