// The model's architecture and regularisation settings: presets (paper Table 3 + small/tiny), JSON
// round trip (config.json in a model directory), validation with user-level messages, parameter count.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "backend/activation.h"

namespace tt::nn {

enum class PositionKind { sinusoidal, learned };  // §3.5; Table 3 row (E)
enum class NormPlacement { post, pre };           // post: LayerNorm(x + Sublayer(x)) as in the paper
using backend::Activation;  // the FFN's: relu (the paper's), or swish / gelu (models imported by tt-convert)
// Where the sinusoidal table puts sin and cos of one frequency: interleaved (§3.5: sin in column 2i, cos in
// 2i+1) or halves (sin in column i, cos in D/2 + i, as Marian and Transformers lay it out).
enum class SinusoidalLayout { interleaved, halves };

struct ModelConfig {
  // Vocabulary. shared_vocab: source, target and output projection share one matrix (§3.4); otherwise the
  // source has its own embedding and the target embedding is tied to the output projection.
  int vocab_size_src = 0;
  int vocab_size_tgt = 0;
  bool shared_vocab = true;

  int d_model = 512;
  int d_ff = 2048;
  int heads = 8;
  int n_layers_enc = 6;
  int n_layers_dec = 6;

  float dropout = 0.1f;            // embedding sum and every sub-layer output before the residual add (§5.4)
  float attention_dropout = 0.0f;  // on the attention weights (option)
  float relu_dropout = 0.0f;       // on the FFN hidden layer (option)
  float label_smoothing = 0.1f;    // ε_ls (§5.4)
  float layer_norm_eps = 1e-5f;

  PositionKind positions = PositionKind::sinusoidal;
  int max_positions = 1024;  // table size (learned positions are parameters of this many rows)
  NormPlacement norm = NormPlacement::post;
  SinusoidalLayout sinusoidal_layout = SinusoidalLayout::interleaved;

  // What models trained elsewhere need (tt-convert import-marian); the defaults are the paper's.
  Activation activation = Activation::relu;
  bool scale_embeddings = true;  // token embeddings times √d_model (§3.4)
  bool output_bias = false;      // a bias on the logits (output.bias [vocab_size_tgt]; Marian's final_logits_bias)

  // Special ids: tt's convention for models it trains (see man tt-tokenize). bos_id is the token the
  // decoder starts from; it may be pad_id (Marian models start from their pad).
  int32_t pad_id = 0;
  int32_t unk_id = 1;
  int32_t bos_id = 2;
  int32_t eos_id = 3;

  int head_dim() const { return d_model / heads; }
  // Throws tt::ConfigError naming the field and the rule ("d_model (500) must be divisible by heads (8)").
  // Sizes are bounded (ModelLimits below), so every count derived from a valid config fits in 64 bits,
  // and float fields must be finite.
  void validate() const;
  // Number of trainable parameters (must equal the model's registry; a test checks). 64-bit arithmetic
  // throughout; exact for any config that passes validate().
  int64_t parameter_count() const;
  // Bytes of fp32 training state: weights, gradients and Adam's two moments, 16 bytes a parameter.
  int64_t training_state_bytes() const;
  // Throws tt::ConfigError with the estimate ("needs about 1.2 TB ... for 75.3 G parameters") if the
  // training state exceeds `available_bytes` (e.g. physical_memory_bytes()). Call before allocating.
  void check_fits_memory(int64_t available_bytes) const;
};

// Upper bounds validate() enforces: far above any real translation model, low enough that parameter
// and activation counts cannot overflow (a 10^9 d_model used to print a negative parameter count).
struct ModelLimits {
  static constexpr int max_d_model = 65536;
  static constexpr int max_d_ff = 1 << 20;
  static constexpr int max_layers = 1000;
  static constexpr int max_vocab = 1 << 24;
  static constexpr int max_positions = 1 << 20;
};

// This machine's physical memory in bytes (0 if unknown).
int64_t physical_memory_bytes();

// "1.2 TB", "512.0 MB": a byte count for messages.
std::string format_bytes(int64_t bytes);

// "base", "big", "small", "tiny"; throws tt::ConfigError listing the valid names.
ModelConfig preset(const std::string& name);

nlohmann::json to_json(const ModelConfig& config);
// Unknown keys and wrong types are errors naming the key (a typo must not silently train the wrong model).
ModelConfig config_from_json(const nlohmann::json& j, ModelConfig base = {});

const char* activation_name(Activation a);  // "relu", "swish", "gelu"

}  // namespace tt::nn
