// Adam (Kingma & Ba) over the whole model at once: the ParameterSet keeps every value and gradient in
// one flat buffer, so an update is ONE backend adam_step call (one pass over memory), not one per tensor.
// Paper settings (§5.3): beta1 0.9, beta2 0.98, eps 1e-9.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/params.h"
#include "tensor/tensor.h"

namespace tt::train {

struct AdamOptions {
  float beta1 = 0.9f;
  float beta2 = 0.98f;
  float eps = 1e-9f;
  float weight_decay = 0.0f;  // decoupled (AdamW); 0 in the paper
};

class Adam {
 public:
  // Allocates the moment buffers m and v (zero) on the parameters' backend, sized like the flat buffer.
  explicit Adam(const nn::ParameterSet& params, AdamOptions options = {});

  // One update of every parameter from its accumulated gradient; the step count goes up by one first,
  // so the first call uses bias correction for step 1. Does not zero the gradients. bf16_copy: null, or
  // where to write the updated weights rounded to bf16 (Backend::bf16_weights_to_write), in the same pass.
  void step(const nn::ParameterSet& params, float lr, uint16_t* bf16_copy = nullptr);

  int64_t steps() const { return steps_; }
  const AdamOptions& options() const { return options_; }
  // Optimizer state, for checkpoints: the moments (flat, like the parameter buffer) and the step count.
  const tensor::Tensor& m() const { return m_; }
  const tensor::Tensor& v() const { return v_; }
  void set_steps(int64_t steps) { steps_ = steps; }
  // Restores a checkpoint's moments (host, flat) and step count. A size mismatch is a tt::FormatError.
  void load_state(const std::vector<float>& m, const std::vector<float>& v, int64_t steps);

 private:
  AdamOptions options_;
  tensor::Tensor m_;
  tensor::Tensor v_;
  int64_t steps_ = 0;
};

}  // namespace tt::train
