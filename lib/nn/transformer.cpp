#include "nn/transformer.h"

#include "nn/init.h"
#include "nn/transformer_impl.h"
#include "util/error.h"

namespace tt::nn {

Transformer::Transformer(const ModelConfig& config, backend::Backend& backend, Usage usage)
    : config_(config), usage_(usage), backend_(backend), impl_(std::make_unique<Impl>(backend)) {
  config_.validate();
  if (usage == Usage::training && config_.activation != Activation::relu)
    throw ConfigError(std::string("the model's activation is ") + activation_name(config_.activation) +
                          ": tt-train trains ReLU models only (swish and gelu have no backward yet)",
                      "translate with it, or train a model of tt's own");
  impl_->declare(params_, config_);
  params_.allocate(backend_, usage == Usage::training);
  impl_->embeddings.bind(params_, backend_);
  impl_->encoder.bind(params_);
  impl_->decoder.bind(params_);
}

Transformer::Transformer(const Transformer& weights, backend::Backend& backend)
    : config_(weights.config_), usage_(Usage::inference), backend_(backend), impl_(std::make_unique<Impl>(backend)) {
  if (backend.device() != backend::Device::cpu || weights.backend_.device() != backend::Device::cpu)
    throw Error("a model's weights can be shared between CPU backends only");
  impl_->declare(params_, config_);
  params_.share_values(weights.params_);
  impl_->embeddings.bind(params_, backend_);
  impl_->encoder.bind(params_);
  impl_->decoder.bind(params_);
}

Transformer::~Transformer() = default;

std::vector<std::pair<std::string, Shape>> Transformer::parameter_shapes(const ModelConfig& config) {
  config.validate();
  ParameterSet params;
  Embeddings embeddings;
  Encoder encoder;
  Decoder decoder;
  embeddings.declare(params, config);
  encoder.declare(params, config);
  decoder.declare(params, config);
  std::vector<std::pair<std::string, Shape>> shapes;
  for (const auto& p : params.all()) shapes.emplace_back(p.name, p.shape);
  return shapes;
}

void Transformer::init_parameters(uint64_t seed) { nn::init_parameters(params_, config_, seed); }

}  // namespace tt::nn
