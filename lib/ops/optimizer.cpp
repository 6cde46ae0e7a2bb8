#include "ops/optimizer.h"

#include <string>

#include "util/check.h"

namespace tt::ops {

void adam_step(const tensor::Tensor& param, const tensor::Tensor& m, const tensor::Tensor& v,
               const tensor::Tensor& grad, const AdamHyper& h, int64_t step, uint16_t* param_bf16) {
  for (const tensor::Tensor* t : {&m, &v, &grad}) {
    TT_CHECK_MSG(t->numel() == param.numel(),
                 "adam_step: " + t->shape().str() + " vs parameters " + param.shape().str());
    TT_CHECK_MSG(t->dtype() == tensor::DType::f32 && &t->backend() == &param.backend(), "adam_step: f32, one backend");
  }
  TT_CHECK_MSG(step >= 1, "adam_step: steps count from 1");
  param.backend().adam_step(param.f32(), m.f32(), v.f32(), grad.f32(), param.numel(), h.lr, h.beta1, h.beta2, h.eps,
                            h.weight_decay, step, param_bf16);
}

}  // namespace tt::ops
