#include "train/adam.h"

#include "util/check.h"
#include "util/error.h"

namespace tt::train {

Adam::Adam(const nn::ParameterSet& params, AdamOptions options) : options_(options) {
  TT_CHECK_MSG(params.allocated(), "Adam needs allocated parameters");
  if (!(options.beta1 >= 0.0f && options.beta1 < 1.0f) || !(options.beta2 >= 0.0f && options.beta2 < 1.0f))
    throw ConfigError("Adam betas must be in [0, 1)");
  if (!(options.eps > 0.0f)) throw ConfigError("Adam eps must be positive");
  backend::Backend& backend = params.values().backend();
  m_ = tensor::Tensor::zeros(backend, params.values().shape());
  v_ = tensor::Tensor::zeros(backend, params.values().shape());
}

void Adam::step(const nn::ParameterSet& params, float lr) {
  TT_CHECK_MSG(params.values().numel() == m_.numel(), "Adam used with a different parameter set");
  ++steps_;
  params.values().backend().adam_step(params.values().f32(), m_.f32(), v_.f32(), params.grads().f32(),
                                      params.values().numel(), lr, options_.beta1, options_.beta2, options_.eps,
                                      options_.weight_decay, steps_);
}

}  // namespace tt::train
