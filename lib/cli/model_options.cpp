#include "cli/model_options.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "util/error.h"

namespace tt::cli {

void add_model_options(CLI::App& app, ModelOptions& o) {
  const char* g = model_options_group;
  app.add_option("--d-model", o.d_model, "Model width d_model")->group(g);
  app.add_option("--d-ff", o.d_ff, "Feed-forward inner width d_ff")->group(g);
  app.add_option("--heads", o.heads, "Attention heads (must divide d_model)")->group(g);
  app.add_option("--layers", o.layers, "Encoder and decoder layers")->group(g);
  app.add_option("--encoder-layers", o.encoder_layers, "Encoder layers")->group(g);
  app.add_option("--decoder-layers", o.decoder_layers, "Decoder layers")->group(g);
  app.add_option("--dropout", o.dropout, "Residual and embedding dropout")->group(g);
  app.add_option("--attention-dropout", o.attention_dropout, "Dropout on attention weights")->group(g);
  app.add_option("--relu-dropout", o.relu_dropout, "Dropout on the FFN hidden layer")->group(g);
  app.add_option("--label-smoothing", o.label_smoothing, "Label smoothing epsilon")->group(g);
  app.add_option("--positions", o.positions, "Position encoding")
      ->check(CLI::IsMember({"sinusoidal", "learned"}))
      ->group(g);
  app.add_option("--norm", o.norm, "LayerNorm placement: post (paper) or pre")
      ->check(CLI::IsMember({"post", "pre"}))
      ->group(g);
  auto* shared = app.add_option("--vocab-size", o.vocab_size, "Shared vocabulary size (src = tgt = output)")->group(g);
  auto* src = app.add_option("--src-vocab-size", o.src_vocab_size, "Source vocabulary size (separate vocabularies)")
                  ->group(g);
  auto* tgt = app.add_option("--tgt-vocab-size", o.tgt_vocab_size, "Target vocabulary size (separate vocabularies)")
                  ->group(g);
  shared->excludes(src)->excludes(tgt);
  app.add_option("--max-positions", o.max_positions, "Longest sequence the position table covers")->group(g);
}

bool model_options_given(const CLI::App& app) {
  for (const CLI::Option* o : app.get_options())
    if (o->get_group() == model_options_group && o->count() > 0) return true;
  return false;
}

void apply(const ModelOptions& o, nn::ModelConfig& c) {
  if (o.d_model) c.d_model = *o.d_model;
  if (o.d_ff) c.d_ff = *o.d_ff;
  if (o.heads) c.heads = *o.heads;
  if (o.layers) c.n_layers_enc = c.n_layers_dec = *o.layers;
  if (o.encoder_layers) c.n_layers_enc = *o.encoder_layers;
  if (o.decoder_layers) c.n_layers_dec = *o.decoder_layers;
  if (o.dropout) c.dropout = *o.dropout;
  if (o.attention_dropout) c.attention_dropout = *o.attention_dropout;
  if (o.relu_dropout) c.relu_dropout = *o.relu_dropout;
  if (o.label_smoothing) c.label_smoothing = *o.label_smoothing;
  if (o.positions) c.positions = *o.positions == "learned" ? nn::PositionKind::learned : nn::PositionKind::sinusoidal;
  if (o.norm) c.norm = *o.norm == "pre" ? nn::NormPlacement::pre : nn::NormPlacement::post;
  if (o.vocab_size) {
    c.vocab_size_src = c.vocab_size_tgt = *o.vocab_size;
    c.shared_vocab = true;
  }
  if (o.src_vocab_size || o.tgt_vocab_size) c.shared_vocab = false;
  if (o.src_vocab_size) c.vocab_size_src = *o.src_vocab_size;
  if (o.tgt_vocab_size) c.vocab_size_tgt = *o.tgt_vocab_size;
  if (o.max_positions) c.max_positions = *o.max_positions;
}

void check_init_architecture(const ModelOptions& o, const nn::ModelConfig& model, const std::string& dir) {
  nn::ModelConfig changed = model;
  apply(o, changed);
  const nlohmann::json now = nn::to_json(changed), was = nn::to_json(model);
  struct Flag {
    const char* name;
    bool given;
    std::vector<const char*> keys;  // the config keys it sets
  };
  // The specific flags before the ones they override (--decoder-layers before --layers).
  const Flag flags[] = {
      {"--d-model", o.d_model.has_value(), {"d_model"}},
      {"--d-ff", o.d_ff.has_value(), {"d_ff"}},
      {"--heads", o.heads.has_value(), {"heads"}},
      {"--encoder-layers", o.encoder_layers.has_value(), {"n_layers_enc"}},
      {"--decoder-layers", o.decoder_layers.has_value(), {"n_layers_dec"}},
      {"--layers", o.layers.has_value(), {"n_layers_enc", "n_layers_dec"}},
      {"--src-vocab-size", o.src_vocab_size.has_value(), {"vocab_size_src", "shared_vocab"}},
      {"--tgt-vocab-size", o.tgt_vocab_size.has_value(), {"vocab_size_tgt", "shared_vocab"}},
      {"--vocab-size", o.vocab_size.has_value(), {"vocab_size_src", "vocab_size_tgt", "shared_vocab"}},
      {"--positions", o.positions.has_value(), {"positions"}},
      {"--norm", o.norm.has_value(), {"norm"}},
      {"--max-positions", o.max_positions.has_value(), {"max_positions"}},
  };
  for (const Flag& flag : flags) {
    if (!flag.given) continue;
    for (const char* key : flag.keys)
      if (now[key] != was[key])
        throw ConfigError(std::string(flag.name) + " changes the architecture of the --init model " + dir + " (" +
                              key + ": " + now[key].dump() + " here, " + was[key].dump() +
                              " in its config.json), so its weights would not fit",
                          "leave " + std::string(flag.name) + " out: --init takes the architecture from the model "
                          "directory (the dropout and label-smoothing flags may change); for another architecture, "
                          "train a new model with --preset or --config");
  }
}

}  // namespace tt::cli
