// tt-train: resolve a model configuration (preset < --config file < flags) and, for now, either print it
// (--dry-run) or train on synthetic batches (--synthetic-steps: the smoke run and the speed benchmark).
#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "backend/backend.h"
#include "cli/app.h"
#include "cli/common_options.h"
#include "cli/run_tool.h"
#include "io/model_dir.h"
#include "nn/config.h"
#include "nn/transformer.h"
#include "train/synthetic.h"
#include "util/error.h"

namespace {

using tt::nn::ModelConfig;

// Flags that override single config fields; unset optionals leave the preset/config file value.
struct ModelFlags {
  std::optional<int> d_model, d_ff, heads, layers, encoder_layers, decoder_layers, vocab_size, src_vocab_size,
      tgt_vocab_size, max_positions;
  std::optional<float> dropout, attention_dropout, relu_dropout, label_smoothing;
  std::optional<std::string> positions, norm;
};

void add_model_flags(CLI::App& app, ModelFlags& f) {
  const char* g = "Model (override the preset and --config)";
  app.add_option("--d-model", f.d_model, "Model width d_model")->group(g);
  app.add_option("--d-ff", f.d_ff, "Feed-forward inner width d_ff")->group(g);
  app.add_option("--heads", f.heads, "Attention heads (must divide d_model)")->group(g);
  app.add_option("--layers", f.layers, "Encoder and decoder layers")->group(g);
  app.add_option("--encoder-layers", f.encoder_layers, "Encoder layers")->group(g);
  app.add_option("--decoder-layers", f.decoder_layers, "Decoder layers")->group(g);
  app.add_option("--dropout", f.dropout, "Residual and embedding dropout")->group(g);
  app.add_option("--attention-dropout", f.attention_dropout, "Dropout on attention weights")->group(g);
  app.add_option("--relu-dropout", f.relu_dropout, "Dropout on the FFN hidden layer")->group(g);
  app.add_option("--label-smoothing", f.label_smoothing, "Label smoothing epsilon")->group(g);
  app.add_option("--positions", f.positions, "Position encoding")
      ->check(CLI::IsMember({"sinusoidal", "learned"}))
      ->group(g);
  app.add_option("--norm", f.norm, "LayerNorm placement: post (paper) or pre")
      ->check(CLI::IsMember({"post", "pre"}))
      ->group(g);
  auto* shared = app.add_option("--vocab-size", f.vocab_size, "Shared vocabulary size (src = tgt = output)")->group(g);
  auto* src = app.add_option("--src-vocab-size", f.src_vocab_size, "Source vocabulary size (separate vocabularies)")
                  ->group(g);
  auto* tgt = app.add_option("--tgt-vocab-size", f.tgt_vocab_size, "Target vocabulary size (separate vocabularies)")
                  ->group(g);
  shared->excludes(src)->excludes(tgt);
  app.add_option("--max-positions", f.max_positions, "Longest sequence the position table covers")->group(g);
}

void apply(const ModelFlags& f, ModelConfig& c) {
  if (f.d_model) c.d_model = *f.d_model;
  if (f.d_ff) c.d_ff = *f.d_ff;
  if (f.heads) c.heads = *f.heads;
  if (f.layers) c.n_layers_enc = c.n_layers_dec = *f.layers;
  if (f.encoder_layers) c.n_layers_enc = *f.encoder_layers;
  if (f.decoder_layers) c.n_layers_dec = *f.decoder_layers;
  if (f.dropout) c.dropout = *f.dropout;
  if (f.attention_dropout) c.attention_dropout = *f.attention_dropout;
  if (f.relu_dropout) c.relu_dropout = *f.relu_dropout;
  if (f.label_smoothing) c.label_smoothing = *f.label_smoothing;
  if (f.positions)
    c.positions = *f.positions == "learned" ? tt::nn::PositionKind::learned : tt::nn::PositionKind::sinusoidal;
  if (f.norm) c.norm = *f.norm == "pre" ? tt::nn::NormPlacement::pre : tt::nn::NormPlacement::post;
  if (f.vocab_size) {
    c.vocab_size_src = c.vocab_size_tgt = *f.vocab_size;
    c.shared_vocab = true;
  }
  if (f.src_vocab_size || f.tgt_vocab_size) c.shared_vocab = false;
  if (f.src_vocab_size) c.vocab_size_src = *f.src_vocab_size;
  if (f.tgt_vocab_size) c.vocab_size_tgt = *f.tgt_vocab_size;
  if (f.max_positions) c.max_positions = *f.max_positions;
}

// A JSON file holding either a bare model config or a model directory's config.json ({"model": ...}).
ModelConfig read_config_file(const std::string& path, const ModelConfig& base) {
  std::ifstream in(path);
  if (!in) throw tt::IoError("cannot open --config file " + path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw tt::FormatError(path + ": not valid JSON (" + e.what() + ")");
  }
  if (j.is_object() && j.contains("model") && j["model"].is_object()) j = j["model"];
  try {
    return tt::nn::config_from_json(j, base);
  } catch (const tt::ConfigError& e) {
    throw tt::ConfigError(path + ": " + e.what(), e.hint());
  }
}

double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

double round_to(double x, int digits) {
  const double f = std::pow(10.0, digits);
  return std::round(x * f) / f;
}

int train_main(int argc, char** argv) {
  CLI::App app{"Train a Transformer translation model. For now: print the resolved configuration (--dry-run) or\n"
               "train on synthetic batches (--synthetic-steps), the smoke run and speed benchmark."};
  tt::cli::configure_app(app, "tt-train");
  std::string preset_name = "base", config_path, init_dir, output_dir, task = "random";
  bool dry_run = false;
  tt::cli::CommonOptions common;
  int64_t synthetic_steps = 0, warmup_steps = 4000;
  int batch_size = 64, src_len = 32, tgt_len = 32;
  double lr_scale = 1.0;
  ModelFlags flags;

  app.add_option("--preset", preset_name, "Architecture preset: base, big, small, tiny")
      ->check(CLI::IsMember({"base", "big", "small", "tiny"}))
      ->capture_default_str();
  app.add_option("--config", config_path, "JSON model config (or a model's config.json); flags override it")
      ->check(CLI::ExistingFile);
  add_model_flags(app, flags);
  app.add_flag("--dry-run", dry_run, "Print the resolved config and parameter count as JSON; do not train");
  const char* s = "Synthetic training (smoke run, benchmark)";
  app.add_option("--synthetic-steps", synthetic_steps, "Train N steps on synthetic batches")->group(s);
  app.add_option("--synthetic-task", task, "random (the benchmark's batches) or copy (learnable)")
      ->check(CLI::IsMember({"random", "copy"}))
      ->capture_default_str()
      ->group(s);
  app.add_option("--batch-size", batch_size, "Sentences per batch")->capture_default_str()->group(s);
  app.add_option("--src-len", src_len, "Source tokens per sentence")->capture_default_str()->group(s);
  app.add_option("--tgt-len", tgt_len, "Target tokens per sentence")->capture_default_str()->group(s);
  app.add_option("--warmup-steps", warmup_steps, "Learning-rate warm-up steps")->capture_default_str()->group(s);
  app.add_option("--lr-scale", lr_scale, "Factor on the paper's learning rate")->capture_default_str()->group(s);
  app.add_option("--init", init_dir, "Start from this model directory (config.json + model.safetensors)")
      ->check(CLI::ExistingDirectory)
      ->excludes("--config")
      ->excludes("--preset")
      ->group(s);
  app.add_option("-o,--output", output_dir, "Save the trained model directory here")->group(s);
  tt::cli::add_seed_option(app, common, "Seed for initialisation, batches and dropout");
  tt::cli::add_threads_option(app, common);
  tt::cli::add_device_option(app, common);
  tt::cli::add_quiet_flag(app, common, "No per-step lines on stderr");
  tt::cli::parse(app, argc, argv);

  if (!dry_run && synthetic_steps == 0) {
    // Until the data pipeline lands there is no real training job: say so as a usage error.
    std::cerr << "tt-train: error: nothing to do: give --dry-run or --synthetic-steps N\n"
              << "Run 'tt-train --help' for usage.\n";
    throw tt::cli::ExitRequest{2};
  }
  ModelConfig config = tt::nn::preset(preset_name);
  if (!init_dir.empty()) {
    config = tt::io::load_model_config(init_dir);
  } else if (!config_path.empty()) {
    config = read_config_file(config_path, config);
  }
  apply(flags, config);
  config.validate();

  if (dry_run) {
    nlohmann::json out = tt::nn::to_json(config);
    out["parameters"] = config.parameter_count();
    std::cout << out.dump() << "\n";
    return 0;
  }

  tt::train::SyntheticOptions options;
  options.steps = synthetic_steps;
  options.batch_size = batch_size;
  options.src_len = src_len;
  options.tgt_len = tgt_len;
  options.seed = common.seed;
  options.warmup_steps = warmup_steps;
  options.lr_scale = lr_scale;
  options.task = task == "copy" ? tt::train::SyntheticTask::copy : tt::train::SyntheticTask::random;

  auto backend = tt::backend::make_backend(common.device, common.threads);
  tt::nn::Transformer model(config, *backend);
  if (!init_dir.empty()) tt::io::load_model_weights(init_dir, model.params());
  else model.init_parameters(common.seed);
  if (!common.quiet)
    std::cerr << "tt-train: " << config.parameter_count() << " parameters on " << backend->name() << ", batch "
              << batch_size << " x " << src_len << " -> " << tgt_len << "\n";

  const double step_tokens = static_cast<double>(batch_size) * tgt_len;
  auto result = tt::train::train_synthetic(model, options, [&](const tt::train::StepReport& r) {
    if (common.quiet) return;
    char line[160];
    std::snprintf(line, sizeof line, "step %lld/%lld  loss %.4f  lr %.3g  %.3f s  %.0f tgt tok/s\n",
                  static_cast<long long>(r.step), static_cast<long long>(synthetic_steps), r.loss, r.lr, r.seconds,
                  step_tokens / r.seconds);
    std::cerr << line;
  });
  if (!output_dir.empty()) {
    tt::io::save_model_dir(output_dir, config, model.params());
    if (!common.quiet) std::cerr << "tt-train: saved " << output_dir << "\n";
  }

  nlohmann::json out;
  out["bench"] = "train";
  out["device"] = backend->name();
  out["threads"] = common.threads;
  out["parameters"] = config.parameter_count();
  out["batch"] = {batch_size, src_len, tgt_len};
  out["steps"] = synthetic_steps;
  out["task"] = task;
  out["first_loss"] = round_to(result.losses.front(), 4);
  out["last_loss"] = round_to(result.losses.back(), 4);
  out["median_step_s"] = round_to(result.median_step_s, 5);
  out["tgt_tok_s"] = round_to(result.tgt_tok_s, 1);
  out["peak_rss_mb"] = round_to(peak_rss_mb(), 1);
  nlohmann::json times = nlohmann::json::array();
  for (double t : result.step_seconds) times.push_back(round_to(t, 5));
  out["step_times"] = times;
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return tt::cli::run_tool("tt-train", argc, argv, &train_main); }
