// The model's architecture and regularisation settings: presets (paper Table 3 + small/tiny), JSON
// round trip (config.json in a model directory), validation with user-level messages, parameter count.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace tt::nn {

enum class PositionKind { sinusoidal, learned };  // §3.5; Table 3 row (E)
enum class NormPlacement { post, pre };           // post: LayerNorm(x + Sublayer(x)) as in the paper

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

  // Special ids: tt's convention for every model (see man tt-tokenize).
  int32_t pad_id = 0;
  int32_t unk_id = 1;
  int32_t bos_id = 2;
  int32_t eos_id = 3;

  int head_dim() const { return d_model / heads; }
  // Throws tt::ConfigError naming the field and the rule ("d_model (500) must be divisible by heads (8)").
  void validate() const;
  // Number of trainable parameters (must equal the model's registry; a test checks).
  int64_t parameter_count() const;
};

// "base", "big", "small", "tiny"; throws tt::ConfigError listing the valid names.
ModelConfig preset(const std::string& name);

nlohmann::json to_json(const ModelConfig& config);
// Unknown keys and wrong types are errors naming the key (a typo must not silently train the wrong model).
ModelConfig config_from_json(const nlohmann::json& j, ModelConfig base = {});

}  // namespace tt::nn
