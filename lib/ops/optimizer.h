// Optimizer front ends: one update over a flat parameter buffer (train/ calls these, never the backend).
#pragma once

#include <cstdint>

#include "tensor/tensor.h"

namespace tt::ops {

struct AdamHyper {
  float lr = 0;
  float beta1 = 0.9f, beta2 = 0.98f, eps = 1e-9f;
  float weight_decay = 0;  // decoupled (AdamW)
};

// One Adam step (bias-corrected for `step` >= 1) of param from grad, updating the moments m and v in place.
// All four are f32 with the same element count on the same backend. param_bf16: null, or the backend's
// buffer (Backend::bf16_weights_to_write) receiving the updated param rounded to bf16 in the same pass.
void adam_step(const tensor::Tensor& param, const tensor::Tensor& m, const tensor::Tensor& v,
               const tensor::Tensor& grad, const AdamHyper& hyper, int64_t step, uint16_t* param_bf16 = nullptr);

}  // namespace tt::ops
