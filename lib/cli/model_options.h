// tt-train's flags that override single model config fields (--d-model, --heads, --dropout, ...), defined
// once: unset ones leave the preset's or --config file's value. Also the check of architecture flags
// against an --init model (whose weights fix the architecture).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "nn/config.h"

namespace tt::cli {

struct ModelOptions {
  std::optional<int> d_model, d_ff, heads, layers, encoder_layers, decoder_layers, vocab_size, src_vocab_size,
      tgt_vocab_size, max_positions;
  std::optional<float> dropout, attention_dropout, relu_dropout, label_smoothing;
  std::optional<std::string> positions, norm;
};

// The help group of these flags.
inline constexpr const char* model_options_group = "Model (override the preset and --config)";

void add_model_options(CLI::App& app, ModelOptions& o);
// Whether any of them was given on the command line.
bool model_options_given(const CLI::App& app);
// The given ones into `config`.
void apply(const ModelOptions& o, nn::ModelConfig& config);

// With --init DIR, `model` is DIR's config: a flag that changes its architecture (anything but the
// dropouts and label smoothing) would make the weights not fit. Throws tt::ConfigError naming the flag.
void check_init_architecture(const ModelOptions& o, const nn::ModelConfig& model, const std::string& dir);

}  // namespace tt::cli
