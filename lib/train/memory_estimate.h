// How much memory training a model takes, estimated before anything is allocated, so that a run that
// cannot fit is refused at once with the estimate (not killed by the OOM killer, or by a bad_alloc an
// hour in). Counted: the fp32 training state (weights, gradients, Adam's two moments: 16 bytes a
// parameter; bf16 adds a 2-byte copy of the weights) and the activations one batch saves for backward,
// per layer and token from what each layer keeps (nn/*::Saved): inputs, Q/K/V and context, the
// attention probabilities ([heads x keys] per query), the FFN hidden layer, the LayerNorm inputs, and
// the logits with their gradient (2 x vocabulary per target token); in bf16 also the 2-byte copies of
// the operands that products read in forward and again in backward, of which the FFN hidden layer and
// attention's Q/K/V, weights after dropout and contexts have no fp32 values beside (the CPU backend's bf16
// storage; the check runs on CPUs).
#pragma once

#include <cstdint>
#include <string>

#include "nn/config.h"

namespace tt::train {

struct MemoryEstimate {
  int64_t parameters = 0;
  int64_t state_bytes = 0;       // weights, gradients, Adam moments (and the bf16 copy)
  int64_t activation_bytes = 0;  // one batch, forward + backward
  int64_t total() const { return state_bytes + activation_bytes; }
};

struct BatchShape {
  int64_t tokens = 0;   // padded tokens a side (source and target each at most this many)
  int64_t length = 0;   // the longest sentence: attention keys per query
  bool bf16 = false;    // bf16 matrix products (bf16 copies of the weights and of kept operands)
  std::string size_option = "batch_tokens";  // the option that sets the batch size, for the hint
};

MemoryEstimate estimate_training_memory(const nn::ModelConfig& config, const BatchShape& batch);

// Throws tt::ConfigError with the estimate ("training needs about 1.2 TB: 16.1 GB of weights, gradients
// and Adam state for 1.01 G parameters and 1.2 TB of activations for a batch of 10000000 tokens, more than
// the 24.5 GB of memory here") when it exceeds `available_bytes`. 0 available: unknown, no check.
// The hint names the batch's size option (option_ref(batch.size_option)).
void check_training_fits(const nn::ModelConfig& config, const BatchShape& batch, int64_t available_bytes);

}  // namespace tt::train
