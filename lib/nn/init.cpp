#include "nn/init.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/copy.h"
#include "util/check.h"
#include "util/rng.h"

namespace tt::nn {

namespace {

// Box-Muller normal from two Philox uniforms.
float normal(uint64_t seed, uint64_t stream, uint64_t i) {
  const double u1 = 1.0 - util::philox_uniform(seed, stream, 2 * i);  // (0, 1]
  const double u2 = util::philox_uniform(seed, stream, 2 * i + 1);
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2));
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

void init_parameters(const ParameterSet& params, const ModelConfig& config, uint64_t seed) {
  const float embedding_std = 1.0f / std::sqrt(static_cast<float>(config.d_model));
  std::vector<float> host;
  for (size_t i = 0; i < params.all().size(); ++i) {
    const Parameter& p = params[i];
    const uint64_t stream = util::rng_stream(util::RngPurpose::init, 0, static_cast<uint32_t>(i));
    host.resize(static_cast<size_t>(p.shape.numel()));
    const bool embedding = p.name.rfind("embeddings.", 0) == 0;
    if (embedding) {
      for (size_t j = 0; j < host.size(); ++j) host[j] = embedding_std * normal(seed, stream, j);
    } else if (ends_with(p.name, "norm.weight")) {
      std::fill(host.begin(), host.end(), 1.0f);
    } else if (ends_with(p.name, ".bias")) {
      std::fill(host.begin(), host.end(), 0.0f);
    } else {
      TT_CHECK_MSG(p.shape.rank() == 2, p.name);
      // Xavier (Glorot) uniform: U(-a, a), a = sqrt(6 / (fan_in + fan_out)).
      const float a = std::sqrt(6.0f / static_cast<float>(p.shape[0] + p.shape[1]));
      for (size_t j = 0; j < host.size(); ++j) host[j] = a * (2.0f * util::philox_uniform(seed, stream, j) - 1.0f);
    }
    ops::upload(p.value, host);
  }
}

}  // namespace tt::nn
