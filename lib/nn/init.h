// The paper's initialisation: Xavier-uniform linear weights, zero biases, N(0, D^-1/2) embeddings and
// learned positions, LayerNorm gamma 1 beta 0 — from the Philox init stream of `seed`, so the same seed
// gives the same model on any device and thread count.
#pragma once

#include <cstdint>

#include "nn/config.h"
#include "nn/params.h"

namespace tt::nn {

void init_parameters(const ParameterSet& params, const ModelConfig& config, uint64_t seed);

}  // namespace tt::nn
