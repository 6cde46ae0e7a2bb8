// Position-wise feed-forward network (§3.3): FFN(x) = max(0, x W1^T + b1) W2^T + b2, with optional dropout on
// the hidden layer (relu_dropout), fused with the bias and ReLU. Imported models may use swish or gelu in
// place of ReLU; those run forward only (inference: no saved state, no dropout).
//   x, y [N, D]; hidden [N, F]. Names: <prefix>.fc1.{weight [F, D], bias [F]}, <prefix>.fc2.{weight [D, F], bias [D]}
#pragma once

#include <string>

#include "nn/linear.h"
#include "nn/step_context.h"
#include "ops/kept_bf16.h"

namespace tt::nn {

class FeedForward {
 public:
  struct Saved {
    // hidden after ReLU and dropout: hidden == 0 marks both masks. bf16 where the backend stores bf16
    // activations and the step has temporaries: fc2's products and the masks read nothing finer.
    tensor::Tensor x, hidden;
    float p = 0;
    ops::KeptBf16 x_kept, hidden_kept;  // bf16 training: fc1's and fc2's inputs, until backward
  };

  void declare(ParameterSet& params, const std::string& prefix, int D, int F, float relu_dropout,
               backend::Activation activation, uint32_t site);
  void bind(const ParameterSet& params);

  // fused: y is the output before fc2's bias, which the caller's fused residual kernel adds (output()).
  void forward(const tensor::Tensor& y, const tensor::Tensor& x, const StepContext& ctx, Saved* saved,
               bool fused = false) const;
  // dx assigned; fused: dx accumulated (it holds the residual path's gradient), fc2's bias gradient left
  // to the caller. Temporaries come from `scratch`.
  void backward(const tensor::Tensor& dx, const tensor::Tensor& dy, const Saved& saved, tensor::Arena& scratch,
                bool fused = false) const;
  const Linear& output() const { return fc2_; }

 private:
  int D_ = 0, F_ = 0;
  float relu_dropout_ = 0;
  backend::Activation activation_ = backend::Activation::relu;
  uint32_t site_ = 0;
  Linear fc1_, fc2_;
};

}  // namespace tt::nn
