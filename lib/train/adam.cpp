#include "train/adam.h"

#include "ops/copy.h"
#include "ops/optimizer.h"
#include "util/check.h"
#include "util/error.h"

namespace tt::train {

Adam::Adam(const nn::ParameterSet& params, AdamOptions options) : options_(options) {
  TT_CHECK_MSG(params.allocated(), "Adam needs allocated parameters");
  if (!(options.beta1 >= 0.0f && options.beta1 < 1.0f) || !(options.beta2 >= 0.0f && options.beta2 < 1.0f))
    throw ConfigError("Adam betas must be in [0, 1)");
  if (!(options.eps > 0.0f)) throw ConfigError("Adam eps must be positive");
  m_ = tensor::Tensor::zeros(params.values().backend(), params.values().shape());
  v_ = tensor::Tensor::zeros(params.values().backend(), params.values().shape());
}

void Adam::step(const nn::ParameterSet& params, float lr, uint16_t* bf16_copy) {
  TT_CHECK_MSG(params.values().numel() == m_.numel(), "Adam used with a different parameter set");
  ++steps_;
  ops::adam_step(params.values(), m_, v_, params.grads(),
                 ops::AdamHyper{lr, options_.beta1, options_.beta2, options_.eps, options_.weight_decay}, steps_,
                 bf16_copy);
}

void Adam::load_state(const std::vector<float>& m, const std::vector<float>& v, int64_t steps) {
  if (static_cast<int64_t>(m.size()) != m_.numel() || static_cast<int64_t>(v.size()) != v_.numel())
    throw FormatError("optimizer state has " + std::to_string(m.size()) + " moments, the model " +
                      std::to_string(m_.numel()));
  if (steps < 0) throw FormatError("optimizer state: negative step count");
  ops::upload(m_, m);
  ops::upload(v_, v);
  steps_ = steps;
}

}  // namespace tt::train
