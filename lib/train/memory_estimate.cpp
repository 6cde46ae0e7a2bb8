#include "train/memory_estimate.h"

#include <algorithm>
#include <cstdio>

#include "util/error.h"

namespace tt::train {

MemoryEstimate estimate_training_memory(const nn::ModelConfig& c, const BatchShape& b) {
  MemoryEstimate m;
  m.parameters = c.parameter_count();
  m.state_bytes = c.training_state_bytes() + (b.bf16 ? 2 * m.parameters : 0);
  // Floats saved per token (validate() bounds every size, so these stay far inside 64 bits).
  const int64_t D = c.d_model, F = c.d_ff, H = c.heads, L = std::max<int64_t>(1, std::min(b.length, b.tokens));
  const int64_t attention_copies = c.attention_dropout > 0 ? 2 : 1;  // the probabilities, and after dropout
  // Self-attention: x, Q|K|V, context (5D), probabilities; two residual blocks (LayerNorm input and
  // dropout: 2D each); FFN input and hidden (D + F).
  const int64_t encoder_layer = 5 * D + attention_copies * H * L + 4 * D + D + F;
  // Self- and cross-attention (cross: x, Q, context, and K|V of the source: 5D), three residual blocks.
  const int64_t decoder_layer = 5 * D + 5 * D + 2 * attention_copies * H * L + 6 * D + D + F;
  const int64_t V = c.vocab_size_tgt;
  const int64_t per_token = c.n_layers_enc * encoder_layer + c.n_layers_dec * decoder_layer + 2 * V + 2 * D;
  m.activation_bytes = 4 * b.tokens * per_token;
  if (b.bf16) {
    // 2-byte copies of what feeds a product in forward and again in backward (Backend::keep_bf16_operand):
    // encoder: x, Q|K|V, weights, context, FFN input and hidden; decoder: the same for self-attention,
    // cross-attention's x, Q, K|V, weights, context, and the FFN; the output projection's input, and the
    // loss gradient's copy (alive with all of them when backward starts).
    const int64_t encoder_kept = 5 * D + H * L + D + F, decoder_kept = 5 * D + H * L + 5 * D + H * L + D + F;
    m.activation_bytes += 2 * b.tokens * (c.n_layers_enc * encoder_kept + c.n_layers_dec * decoder_kept + D + V);
    // The FFN hidden layer and attention's Q|K|V (encoder 3D, decoder 3D + 3D) and contexts are saved in
    // bf16 alone (Backend::bf16_storage): their copies above are all there is of them.
    m.activation_bytes -= 4 * b.tokens * (c.n_layers_enc * (4 * D + F) + c.n_layers_dec * (8 * D + F));
    // So are the weights after attention dropout (their copy is the one counted above for the weights).
    m.activation_bytes -= 4 * b.tokens * (attention_copies - 1) * H * L * (c.n_layers_enc + 2 * c.n_layers_dec);
  }
  return m;
}

void check_training_fits(const nn::ModelConfig& config, const BatchShape& batch, int64_t available_bytes) {
  const MemoryEstimate m = estimate_training_memory(config, batch);
  if (available_bytes <= 0 || m.total() <= available_bytes) return;
  char params[32];
  std::snprintf(params, sizeof params, "%.3g", static_cast<double>(m.parameters) / 1e9);
  throw ConfigError("the model does not fit in memory: training needs about " + nn::format_bytes(m.total()) +
                        " (" + nn::format_bytes(m.state_bytes) + " of weights, gradients and Adam state for " +
                        params + " G parameters, and " + nn::format_bytes(m.activation_bytes) +
                        " of activations for a batch of " + std::to_string(batch.tokens) +
                        " tokens), more than the " + nn::format_bytes(available_bytes) + " of memory here",
                    "lower " + option_ref(batch.size_option) +
                        (batch.size_option == "batch_tokens" ? " (reach large batches with " + option_ref("accum") + ")"
                                                             : std::string()) +
                        " or make the model smaller (d_model, d_ff, layers, vocabulary size)");
}

}  // namespace tt::train
