// tt-train: resolve a model configuration (preset < --config file < flags), then print it (--dry-run),
// train on synthetic batches (--synthetic-steps: the smoke run and the speed benchmark), or train on a
// parallel corpus into a run directory (--train ... -o RUN; --resume RUN continues one).
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <regex>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <string>

#include "backend/backend.h"
#include "cli/app.h"
#include "cli/common_options.h"
#include "cli/flag_names.h"
#include "cli/input_files.h"
#include "cli/run_tool.h"
#include "data/parallel_corpus.h"
#include "data/spm_tokenizer.h"
#include "dist/communicator.h"
#include "io/model_dir.h"
#include "io/model_vocab.h"
#include "nn/config.h"
#include "nn/transformer.h"
#include "train/checkpoint.h"
#include "train/progress_printer.h"
#include "train/run_config.h"
#include "train/synthetic.h"
#include "train/training_run.h"
#include "train/valid_bleu.h"
#include "util/atomic_file.h"
#include "util/signals.h"
#include "util/text_io.h"
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

namespace fs = std::filesystem;

// "90s", "10m", "2h", "1d" or plain seconds.
CLI::Validator duration_validator() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        static const std::regex ok(R"(([0-9]+(\.[0-9]+)?)([smhd]?))");
        std::smatch m;
        if (!std::regex_match(v, m, ok)) return "expected a duration such as 90s, 10m or 2h, got '" + v + "'";
        const double unit = m[3] == "m" ? 60 : m[3] == "h" ? 3600 : m[3] == "d" ? 86400 : 1;
        v = std::to_string(std::stod(m[1].str()) * unit);
        return "";
      },
      "DURATION");
}

std::string absolute(const std::string& path) { return path.empty() ? path : fs::absolute(path).lexically_normal().string(); }

// Options read from the command line for a corpus run, and which flags the user actually gave.
struct CorpusFlags {
  std::string precision = "fp32";  // --precision (also for synthetic runs)
  std::vector<std::string> train, valid;
  std::string spm, src_spm, tgt_spm, resume, log;
  tt::train::RunConfig config;
  double lr = 0;
};

// Flags whose value shapes the training trajectory: a resumed run must keep them (bit-exact resume).
const std::map<std::string, std::vector<std::string>> trajectory_flags = {
    {"--train", {"train_src", "train_tgt"}}, {"--spm", {"source_spm", "target_spm"}},
    {"--src-spm", {"source_spm"}}, {"--tgt-spm", {"target_spm"}}, {"--max-len", {"max_len"}},
    {"--max-len-ratio", {"max_len_ratio"}}, {"--batch-tokens", {"batch_tokens"}}, {"--accum", {"accum"}},
    {"--clip-norm", {"clip_norm"}}, {"--weight-decay", {"weight_decay"}}, {"--warmup-steps", {"warmup_steps"}},
    {"--lr-scale", {"lr_scale", "lr_schedule"}}, {"--lr", {"lr", "lr_schedule"}}, {"--seed", {"seed"}}};
// Flags a resumed run may change.
const std::map<std::string, std::vector<std::string>> free_flags = {
    {"--valid", {"valid_src", "valid_tgt"}}, {"--valid-metric", {"valid_metric"}}, {"--max-steps", {"max_steps"}}, {"--max-epochs", {"max_epochs"}},
    {"--time-limit", {"time_limit_s"}}, {"--early-stop", {"early_stop"}}, {"--valid-every", {"valid_every"}},
    {"--save-every", {"save_every"}}, {"--save-minutes", {"save_minutes"}}, {"--keep-last", {"keep_last"}},
    {"--report-every", {"report_every"}}, {"--log", {"log"}}};

// The resumed run's options: the checkpoint's, with the free flags the user gave on top. A trajectory
// flag with a different value is refused before anything is written.
tt::train::RunConfig merge_for_resume(const CLI::App& app, const tt::train::RunConfig& given,
                                      const nlohmann::json& saved, const std::string& file) {
  nlohmann::json merged = saved;
  const nlohmann::json now = tt::train::to_json(given);
  for (const auto& [flag, keys] : trajectory_flags) {
    if (app.get_option(flag)->count() == 0) continue;
    for (const auto& key : keys)
      if (saved.contains(key) && saved[key] != now[key])
        throw tt::ConfigError(flag + " differs from the run being resumed (" + key + ": " + now[key].dump() +
                                  " here, " + saved[key].dump() + " in " + file + ")",
                              "leave " + flag + " out to keep the run's value, or start a new run with -o");
  }
  for (const auto& [flag, keys] : free_flags)
    if (app.get_option(flag)->count() > 0)
      for (const auto& key : keys) merged[key] = now[key];
  return tt::train::run_config_from_json(merged, file);
}

void check_vocab_flag(const std::optional<int>& flag, const char* name, int pieces, const std::string& model) {
  if (flag && *flag != pieces)
    throw tt::ConfigError(std::string(name) + " " + std::to_string(*flag) + " differs from the " +
                              std::to_string(pieces) + " pieces of " + model,
                          "leave it out: the vocabulary size comes from the SentencePiece model");
}

// Differences between two configs, "d_model: 64 vs 32, ...".
std::string config_diff(const ModelConfig& a, const ModelConfig& b) {
  const nlohmann::json ja = tt::nn::to_json(a), jb = tt::nn::to_json(b);
  std::string out;
  for (const auto& [key, value] : ja.items())
    if (!jb.contains(key) || jb[key] != value) out += (out.empty() ? "" : ", ") + key + ": " + value.dump() + " vs " + jb[key].dump();
  return out;
}

// Every rank starts from rank 0's parameters (initialisation is deterministic, a loaded file is the same
// file, but one broadcast makes it certain).
void broadcast_parameters(tt::dist::Communicator& comm, tt::nn::ParameterSet& params) {
  if (comm.size() == 1) return;
  std::vector<float> host = params.values().to_host_f32();
  comm.broadcast(host.data(), static_cast<int64_t>(host.size() * sizeof(float)), 0);
  params.values().backend().copy_from_host(params.values().f32(), host.data(), host.size() * sizeof(float));
}

// --precision: bf16 matrix products need bf16 instructions (oneDNN's effective ISA avx512_core_bf16 or
// AMX); without them tt-train refuses rather than silently train in fp32. Returns the header's words.
std::string use_precision(tt::backend::Backend& backend, const std::string& precision) {
  const bool bf16 = precision == "bf16";
  if (bf16 && !backend.set_matmul_precision(tt::backend::MatmulPrecision::bf16))
    throw tt::Error("--precision bf16 is not available on " + backend.name() +
                    (backend.matmul_isa().empty() ? std::string() : ", oneDNN ISA " + backend.matmul_isa()) +
                    " (a CPU needs AVX512-BF16 or AMX): use --precision fp32");
  const std::string isa = backend.matmul_isa();
  return precision + " matmuls" + (isa.empty() ? "" : " (oneDNN " + isa + ")");
}

int synthetic_main(const ModelConfig& config, const tt::cli::CommonOptions& common, const std::string& init_dir,
                   const std::string& output_dir, const tt::train::SyntheticOptions& options, const std::string& task,
                   tt::dist::Communicator& comm, const std::string& precision) {
  auto backend = tt::backend::make_backend(common.device, common.threads);
  const std::string precision_words = use_precision(*backend, precision);
  tt::nn::Transformer model(config, *backend);
  if (!init_dir.empty()) tt::io::load_model_weights(init_dir, model.params());
  else model.init_parameters(common.seed);
  broadcast_parameters(comm, model.params());
  const bool talk = !common.quiet && comm.is_root();
  if (talk)
    std::cerr << "tt-train: " << config.parameter_count() << " parameters on " << backend->name() << ", "
              << precision_words << ", batch " << options.batch_size << " x " << options.src_len << " -> "
              << options.tgt_len
              << (comm.size() > 1 ? " on each of " + std::to_string(comm.size()) + " ranks (" + comm.name() + ")" : "")
              << "\n";

  const double step_tokens = static_cast<double>(options.batch_size) * options.tgt_len * comm.size();
  auto result = tt::train::train_synthetic(model, options, [&](const tt::train::StepReport& r) {
    if (!talk) return;
    char line[160];
    std::snprintf(line, sizeof line, "step %lld/%lld  loss %.4f  lr %.3g  %.3f s  %.0f tgt tok/s\n",
                  static_cast<long long>(r.step), static_cast<long long>(options.steps), r.loss, r.lr, r.seconds,
                  step_tokens / r.seconds);
    std::cerr << line;
  }, &comm);
  if (!comm.is_root()) return 0;
  if (!output_dir.empty()) {
    tt::io::save_model_dir(output_dir, config, model.params());
    if (!common.quiet) std::cerr << "tt-train: saved " << output_dir << "\n";
  }

  nlohmann::json out;
  out["bench"] = "train";
  out["device"] = backend->name();
  out["precision"] = precision;
  out["matmul_isa"] = backend->matmul_isa();
  out["threads"] = common.threads;
  out["ranks"] = comm.size();
  out["parameters"] = config.parameter_count();
  out["batch"] = {options.batch_size, options.src_len, options.tgt_len};
  out["steps"] = options.steps;
  out["task"] = task;
  out["first_loss"] = round_to(result.losses.front(), 4);
  out["last_loss"] = round_to(result.losses.back(), 4);
  out["median_step_s"] = round_to(result.median_step_s, 5);
  out["tgt_tok_s"] = round_to(result.tgt_tok_s, 1);
  out["median_allreduce_s"] = round_to(result.median_allreduce_s, 6);
  out["peak_rss_mb"] = round_to(peak_rss_mb(), 1);
  nlohmann::json times = nlohmann::json::array();
  for (double t : result.step_seconds) times.push_back(round_to(t, 5));
  out["step_times"] = times;
  std::cout << out.dump() << "\n";
  return 0;
}

nlohmann::json corpus_json(const tt::data::CorpusStats& s) {
  return {{"lines", s.lines},           {"kept", s.kept},
          {"dropped_empty", s.dropped_empty}, {"dropped_long", s.dropped_long},
          {"dropped_ratio", s.dropped_ratio}, {"src_tokens", s.src_tokens},
          {"tgt_tokens", s.tgt_tokens}};
}

std::string corpus_line(const char* what, const tt::data::CorpusStats& s) {
  return std::string(what) + ": " + std::to_string(s.kept) + " of " + std::to_string(s.lines) + " pairs kept (" +
         std::to_string(s.dropped_empty) + " empty, " + std::to_string(s.dropped_long) + " too long, " +
         std::to_string(s.dropped_ratio) + " length ratio), " + std::to_string(s.src_tokens) + " source and " +
         std::to_string(s.tgt_tokens) + " target tokens";
}

// Makes sure the run directory can be written before any work (a typo in -o must not cost an hour).
void check_writable(const std::string& run_dir) {
  std::error_code ec;
  fs::create_directories(fs::path(run_dir) / "checkpoints", ec);
  if (ec) throw tt::IoError("cannot create the run directory " + run_dir + ": " + ec.message());
  tt::util::AtomicFile probe((fs::path(run_dir) / ".write-test").string());
  probe.stream() << "ok";
  if (!probe.stream().flush()) throw tt::IoError("cannot write into the run directory " + run_dir);
}  // the uncommitted probe is removed

int corpus_main(const CLI::App& app, ModelConfig config, bool model_flags_given, const ModelFlags& flags,
                CorpusFlags& f, const tt::cli::CommonOptions& common, tt::dist::Communicator& comm) {
  using namespace tt;
  // Data parallel: every rank reads the data (and, resuming, the checkpoint) itself; rank 0 alone writes.
  const bool root = comm.is_root();
  train::RunConfig rc = f.config;
  train::TrainerState state;
  std::string run_dir, resume_from, source_spm = rc.data.source_spm, target_spm = rc.data.target_spm;
  nlohmann::json checkpoint_config;
  if (!f.resume.empty()) {
    run_dir = f.resume;
    resume_from = train::last_checkpoint(run_dir);
    const ModelConfig saved_config = io::load_model_config(resume_from, &checkpoint_config);
    state = train::load_trainer_state(resume_from);
    rc = merge_for_resume(app, rc, state.options, (fs::path(resume_from) / train::trainer_state_file_name).string());
    const io::VocabFiles vocab = io::vocab_files(resume_from, checkpoint_config);
    source_spm = vocab.source;  // the checkpoint's copies: the run needs nothing outside it
    target_spm = vocab.target;
    if (model_flags_given) {
      config.vocab_size_src = saved_config.vocab_size_src;
      config.vocab_size_tgt = saved_config.vocab_size_tgt;
      config.shared_vocab = saved_config.shared_vocab;
      if (const std::string diff = config_diff(config, saved_config); !diff.empty())
        throw ConfigError("the model configuration differs from the run being resumed (" + diff + "; here vs " +
                              resume_from + "/config.json)",
                          "resume without model options, or start a new run with -o");
    }
    config = saved_config;
  } else {
    run_dir = f.config.run.run_dir;
    std::error_code ec;
    if (fs::exists(fs::symlink_status(fs::path(run_dir) / "last", ec)) || !train::list_checkpoints(run_dir).empty())
      throw ConfigError(run_dir + " already holds a training run",
                        "continue it with --resume " + run_dir + ", or give -o a new directory");
  }
  rc.run.run_dir = run_dir;

  const data::SpmTokenizer src_spm = data::SpmTokenizer::load(source_spm);
  const bool shared = fs::weakly_canonical(source_spm) == fs::weakly_canonical(target_spm);
  const data::SpmTokenizer tgt_spm = data::SpmTokenizer::load(target_spm);
  data::require_tt_special_ids(src_spm);
  data::require_tt_special_ids(tgt_spm);
  if (f.resume.empty()) {
    check_vocab_flag(shared ? flags.vocab_size : flags.src_vocab_size, shared ? "--vocab-size" : "--src-vocab-size",
                     src_spm.piece_size(), rc.data.source_spm);
    if (!shared) check_vocab_flag(flags.tgt_vocab_size, "--tgt-vocab-size", tgt_spm.piece_size(), rc.data.target_spm);
    if (shared && (flags.src_vocab_size || flags.tgt_vocab_size))
      throw ConfigError("--src-vocab-size/--tgt-vocab-size need separate models (--src-spm, --tgt-spm)");
    config.vocab_size_src = src_spm.piece_size();
    config.vocab_size_tgt = tgt_spm.piece_size();
    config.shared_vocab = shared;
    config.validate();
  }
  if (rc.data.filter.max_len < 1) throw ConfigError("--max-len (" + std::to_string(rc.data.filter.max_len) + ") must be at least 1");
  if (rc.data.filter.max_len + 1 > config.max_positions)
    throw ConfigError("--max-len " + std::to_string(rc.data.filter.max_len) + " needs max_positions > " +
                          std::to_string(rc.data.filter.max_len) + " (the model has " +
                          std::to_string(config.max_positions) + ")",
                      "lower --max-len or raise --max-positions");
  if (rc.run.keep_last < 1) throw ConfigError("--keep-last must be at least 1");

  const std::string log_path = rc.log.empty() ? (fs::path(run_dir) / "log.jsonl").string() : rc.log;
  std::optional<train::RunLog> log;
  if (root) {
    check_writable(run_dir);
    log.emplace(log_path);
  } else {
    log.emplace();  // discards
  }

  auto backend = backend::make_backend(common.device, common.threads);
  const std::string precision_words = use_precision(*backend, f.precision);
  const int threads = cli::resolve_threads(common.threads);
  const data::ParallelCorpus corpus =
      data::ParallelCorpus::load(rc.data.train_src, rc.data.train_tgt, src_spm, tgt_spm, rc.data.filter, threads);
  if (corpus.size() == 0) throw ConfigError("no training pairs left after filtering (" + corpus_line("training", corpus.stats()) + ")");
  train::BatcherOptions batching;
  batching.batch_tokens = rc.data.batch_tokens;
  batching.seed = rc.trainer.seed;
  batching.pad_id = config.pad_id;
  batching.bos_id = config.bos_id;
  batching.eos_id = config.eos_id;
  train::CorpusBatches source(corpus, batching);

  std::optional<data::ParallelCorpus> valid_corpus;
  std::optional<train::Validator> validator;
  if (!rc.data.valid_src.empty() && root) {  // only rank 0 validates
    data::CorpusFilter valid_filter;  // keep what the model can take; only empty pairs go
    valid_filter.max_len = config.max_positions - 1;
    valid_corpus = data::ParallelCorpus::load(rc.data.valid_src, rc.data.valid_tgt, src_spm, tgt_spm, valid_filter, threads);
    validator.emplace(*valid_corpus, rc.data.batch_tokens, config);
    if (rc.valid_metric == "bleu")
      validator->set_bleu(train::make_bleu_scorer(rc.data.valid_src, util::read_lines(rc.data.valid_tgt), src_spm,
                                                  tgt_spm, train::ValidBleuOptions{64, threads}));
  }

  nn::Transformer model(config, *backend);
  train::Trainer trainer(model, source, rc.trainer, comm);
  if (!resume_from.empty()) {
    io::load_model_weights(resume_from, model.params());
    train::load_optimizer(resume_from, trainer.optimizer());
    if (trainer.optimizer().steps() != state.step)
      throw FormatError(resume_from + ": optimizer step " + std::to_string(trainer.optimizer().steps()) +
                        " and trainer step " + std::to_string(state.step) + " disagree");
    source.seek(state.position);
  } else {
    model.init_parameters(rc.trainer.seed);
    state.seed = rc.trainer.seed;
  }
  broadcast_parameters(comm, model.params());
  state.options = train::to_json(rc);

  const double padding = source.batcher().padding_fraction();
  nlohmann::json start{{"type", "start"}, {"step", state.step}, {"device", backend->name()},
                       {"precision", f.precision}, {"matmul_isa", backend->matmul_isa()}, {"threads", threads},
                       {"parameters", config.parameter_count()}, {"model", nn::to_json(config)},
                       {"train", corpus_json(corpus.stats())}, {"batches_per_epoch", source.batches_per_epoch()},
                       {"padding", round_to(padding, 4)}, {"options", state.options}};
  if (valid_corpus) start["valid"] = corpus_json(valid_corpus->stats());
  if (!resume_from.empty()) start["resumed_from"] = fs::relative(resume_from, run_dir).string();
  if (comm.size() > 1) start["ranks"] = comm.size();
  log->write(start);
  if (!common.quiet && root) {
    if (comm.size() > 1)
      std::cerr << "tt-train: data parallel over " << comm.size() << " ranks (" << comm.name() << "), "
                << trainer.batches_per_step() << " batches per step\n";
    std::cerr << "tt-train: " << backend->name() << ", " << threads << (threads == 1 ? " thread, " : " threads, ") << precision_words
              << ", " << config.parameter_count()
              << " parameters (d_model " << config.d_model << ", " << config.n_layers_enc << "+" << config.n_layers_dec
              << " layers, vocab " << config.vocab_size_src
              << (config.shared_vocab ? " shared" : " / " + std::to_string(config.vocab_size_tgt)) << ")\n"
              << "tt-train: " << corpus_line("training", corpus.stats()) << "\n";
    if (valid_corpus) std::cerr << "tt-train: " << corpus_line("validation", valid_corpus->stats()) << "\n";
    char line[200];
    std::snprintf(line, sizeof line, "%lld batches per epoch of <= %lld tokens a side, %.1f%% padding",
                  static_cast<long long>(source.batches_per_epoch()), static_cast<long long>(rc.data.batch_tokens),
                  100 * padding);
    std::cerr << "tt-train: " << line << "\n";
    if (!resume_from.empty())
      std::cerr << "tt-train: resuming " << resume_from << " at step " << state.step << "\n";
    std::cerr << "tt-train: writing " << run_dir << " (log " << log_path << ")\n";
  }

  train::CheckpointContents contents;
  contents.config = &config;
  contents.params = &model.params();
  contents.source_spm = source_spm;
  contents.target_spm = target_spm;
  contents.training = state.options;
  tt::train::ProgressPrinter progress(std::cerr, common.quiet, ::isatty(2) != 0);
  train::RunCallbacks callbacks;
  callbacks.on_step = [&](const train::StepView& v) { progress.step(v); };
  callbacks.on_record = [&](const nlohmann::json& j) {
    progress.record(j);
    if (j["type"] == "end" && j["reason"] != "error") std::cout << j.dump() << "\n";  // the summary, for scripts
  };
  util::SignalGuard signals;
  const train::RunResult result = train::run_training(trainer, state, validator ? &*validator : nullptr, contents,
                                                      rc.run, *log, &signals, callbacks);
  return result.reason == train::StopReason::signal ? util::SignalGuard::exit_status(result.signal) : 0;
}

int train_main(int argc, char** argv) {
  CLI::App app{"Train a Transformer translation model on a parallel corpus (--train ... -o RUN), resume a run\n"
               "(--resume RUN), print the resolved configuration (--dry-run) or train on synthetic batches\n"
               "(--synthetic-steps), the smoke run and speed benchmark."};
  tt::cli::configure_app(app, "tt-train");
  std::string preset_name = "base", config_path, init_dir, output_dir, task = "random";
  bool dry_run = false;
  tt::cli::CommonOptions common;
  int64_t synthetic_steps = 0;
  int batch_size = 64, src_len = 32, tgt_len = 32;
  ModelFlags flags;
  CorpusFlags f;
  auto& rc = f.config;

  app.add_option("--preset", preset_name, "Architecture preset: base, big, small, tiny")
      ->check(CLI::IsMember({"base", "big", "small", "tiny"}))
      ->capture_default_str();
  app.add_option("--config", config_path, "JSON model config (or a model's config.json); flags override it");
  add_model_flags(app, flags);
  app.add_flag("--dry-run", dry_run, "Print the resolved config and parameter count as JSON; do not train");

  const char* d = "Data";
  app.add_option("--train", f.train, "Training corpus: SRC TGT (raw text, line N of one translates line N of the other)")
      ->expected(2)->group(d);
  app.add_option("--valid", f.valid, "Validation corpus: SRC TGT")->expected(2)->group(d);
  auto* spm = app.add_option("--spm", f.spm, "Joint SentencePiece model (source and target)")
                  ->group(d);
  auto* src_spm = app.add_option("--src-spm", f.src_spm, "Source SentencePiece model (separate vocabularies)")
                      ->group(d);
  auto* tgt_spm = app.add_option("--tgt-spm", f.tgt_spm, "Target SentencePiece model (separate vocabularies)")
                      ->group(d);
  spm->excludes(src_spm)->excludes(tgt_spm);
  app.add_option("--max-len", rc.data.filter.max_len, "Drop pairs with a side longer than N pieces")
      ->capture_default_str()->group(d);
  app.add_option("--max-len-ratio", rc.data.filter.max_len_ratio, "Drop pairs whose length ratio exceeds R (0: off)")
      ->check(CLI::NonNegativeNumber)->group(d);
  app.add_option("--batch-tokens", rc.data.batch_tokens, "Padded source and target tokens per batch, at most")
      ->check(CLI::PositiveNumber)->capture_default_str()->group(d);

  const char* r = "Recipe";
  app.add_option("--accum", rc.trainer.accum, "Batches accumulated per optimizer step")
      ->check(CLI::PositiveNumber)->capture_default_str()->group(r);
  auto* warmup = app.add_option("--warmup-steps", rc.trainer.schedule.warmup_steps, "Learning-rate warm-up steps")
                     ->check(CLI::PositiveNumber)->capture_default_str()->group(r);
  (void)warmup;
  auto* lr_scale = app.add_option("--lr-scale", rc.trainer.schedule.scale, "Factor on the paper's learning rate")
                       ->capture_default_str()->group(r);
  auto* lr = app.add_option("--lr", f.lr, "Peak learning rate: the inverse-sqrt schedule instead of the paper's")
                 ->check(CLI::PositiveNumber)->group(r);
  lr->excludes(lr_scale);
  app.add_option("--clip-norm", rc.trainer.clip_norm, "Clip the gradient's L2 norm to X (0: off)")
      ->check(CLI::NonNegativeNumber)->group(r);
  app.add_option("--weight-decay", rc.trainer.adam.weight_decay, "Decoupled weight decay (AdamW; 0: off)")
      ->check(CLI::NonNegativeNumber)->group(r);

  const char* st = "Stopping, validation, checkpoints";
  app.add_option("--max-steps", rc.run.max_steps, "Stop after N optimizer steps")->check(CLI::NonNegativeNumber)->group(st);
  app.add_option("--max-epochs", rc.run.max_epochs, "Stop after N epochs")->check(CLI::NonNegativeNumber)->group(st);
  app.add_option("--time-limit", rc.run.time_limit_s, "Stop after this long (90s, 10m, 2h)")
      ->transform(duration_validator())->group(st);
  app.add_option("--early-stop", rc.run.early_stop, "Stop after N validations without improvement")
      ->check(CLI::NonNegativeNumber)->group(st);
  app.add_option("--valid-every", rc.run.valid_every, "Validate (and save) every N steps; also at the end")
      ->check(CLI::NonNegativeNumber)->group(st);
  app.add_option("--valid-metric", rc.valid_metric, "What picks run/best and early stopping: bleu (greedy) or loss")
      ->check(CLI::IsMember({"bleu", "loss"}))->capture_default_str()->group(st);
  app.add_option("--save-every", rc.run.save_every, "Save a checkpoint every N steps")->check(CLI::NonNegativeNumber)->group(st);
  app.add_option("--save-minutes", rc.run.save_minutes, "Save a checkpoint every M minutes (the paper: 10)")
      ->check(CLI::NonNegativeNumber)->group(st);
  app.add_option("--keep-last", rc.run.keep_last, "Checkpoints to keep (run/best is never deleted)")
      ->check(CLI::PositiveNumber)->capture_default_str()->group(st);
  app.add_option("--report-every", rc.run.report_every, "Steps per log record and plain progress line")
      ->check(CLI::PositiveNumber)->capture_default_str()->group(st);
  app.add_option("--log", f.log, "JSON-lines log file (default: RUN/log.jsonl)")->group(st);
  auto* resume = app.add_option("--resume", f.resume, "Continue the run in this directory from its last checkpoint")
                     ->group(st);

  const char* s = "Synthetic training (smoke run, benchmark)";
  app.add_option("--synthetic-steps", synthetic_steps, "Train N steps on synthetic batches")->group(s);
  app.add_option("--synthetic-task", task, "random (the benchmark's batches) or copy (learnable)")
      ->check(CLI::IsMember({"random", "copy"}))->capture_default_str()->group(s);
  app.add_option("--batch-size", batch_size, "Sentences per batch")->capture_default_str()->group(s);
  app.add_option("--src-len", src_len, "Source tokens per sentence")->capture_default_str()->group(s);
  app.add_option("--tgt-len", tgt_len, "Target tokens per sentence")->capture_default_str()->group(s);
  app.add_option("--init", init_dir, "Start from this model directory (config.json + model.safetensors)")
      ->excludes("--config")->excludes("--preset")->group(s);
  auto* output = app.add_option("-o,--output", output_dir, "The run directory (corpus training) or model directory (synthetic)");
  resume->excludes(output)->excludes("--init")->excludes("--synthetic-steps");
  app.add_option("--precision", f.precision, "Matrix products: fp32, or bf16 operands with fp32 accumulation "
                 "(needs AVX512-BF16 or AMX)")
      ->check(CLI::IsMember({"fp32", "bf16"}))->capture_default_str();
  tt::cli::add_seed_option(app, common, "Seed for initialisation, batches and dropout");
  tt::cli::add_threads_option(app, common);
  tt::cli::add_device_option(app, common);
  tt::cli::add_quiet_flag(app, common, "No progress lines on stderr");
  tt::cli::parse(app, argc, argv);
  // The library names options by field; these flags name them for the user.
  const tt::cli::FlagNames flags_by_field(app, {{"time_limit_s", "--time-limit"}, {"steps", "--synthetic-steps"}});
  return tt::cli::with_flag_names(flags_by_field, [&] {
  // Files are data, not usage: a missing or unreadable one is exit 1 naming it (man 7 tt).
  if (!config_path.empty()) tt::cli::check_input_file(config_path, "--config file");
  tt::cli::check_input_files(f.train, "--train file");
  tt::cli::check_input_files(f.valid, "--valid file");
  for (const std::string* model : {&f.spm, &f.src_spm, &f.tgt_spm})
    if (!model->empty()) tt::cli::check_input_file(*model, "SentencePiece model");
  for (const std::string* dir : {&f.resume, &init_dir})
    if (!dir->empty() && !std::filesystem::is_directory(*dir))
      throw tt::IoError(*dir + ": not a directory", "give a run directory (--resume) or model directory (--init)");

  const bool corpus_run = !f.train.empty() || !f.resume.empty();
  auto usage = [](const std::string& what) {
    std::cerr << "tt-train: error: " << what << "\nRun 'tt-train --help' for usage.\n";
    throw tt::cli::ExitRequest{2};
  };
  if (!dry_run && synthetic_steps == 0 && !corpus_run)
    usage("nothing to do: give --train SRC TGT with --spm and -o RUN, --resume RUN, --dry-run or --synthetic-steps N");
  if (corpus_run && synthetic_steps > 0) usage("--synthetic-steps and --train/--resume exclude each other");
  if (!f.train.empty() && f.resume.empty()) {
    if (output_dir.empty()) usage("--train needs -o RUN, the run directory");
    if (f.spm.empty() && (f.src_spm.empty() || f.tgt_spm.empty()))
      usage("--train needs --spm MODEL (joint vocabulary) or both --src-spm and --tgt-spm");
  }
  ModelConfig config = tt::nn::preset(preset_name);
  if (!f.resume.empty() && app.get_option("--preset")->count() == 0 && config_path.empty()) {
    config = tt::io::load_model_config(tt::train::last_checkpoint(f.resume));  // flags apply to the run's config
  } else if (!init_dir.empty()) {
    config = tt::io::load_model_config(init_dir);
  } else if (!config_path.empty()) {
    config = read_config_file(config_path, config);
  }
  apply(flags, config);

  if (corpus_run && !dry_run) {
    rc.run.run_dir = output_dir;
    if (!f.train.empty()) {
      rc.data.train_src = absolute(f.train[0]);
      rc.data.train_tgt = absolute(f.train[1]);
    }
    if (!f.valid.empty()) {
      rc.data.valid_src = absolute(f.valid[0]);
      rc.data.valid_tgt = absolute(f.valid[1]);
    }
    rc.data.source_spm = absolute(f.spm.empty() ? f.src_spm : f.spm);
    rc.data.target_spm = absolute(f.spm.empty() ? f.tgt_spm : f.spm);
    if (app.get_option("--lr")->count() > 0) {
      rc.trainer.schedule.kind = tt::train::LrScheduleKind::inverse_sqrt;
      rc.trainer.schedule.peak_lr = f.lr;
    }
    rc.trainer.seed = common.seed;
    rc.log = f.log.empty() ? f.log : absolute(f.log);
    bool model_flags_given = app.get_option("--preset")->count() > 0 || !config_path.empty();
    for (const CLI::Option* o : app.get_options())
      if (o->get_group() == "Model (override the preset and --config)" && o->count() > 0) model_flags_given = true;
    const std::unique_ptr<tt::dist::Communicator> comm = tt::dist::make_communicator("tt-train");
    return corpus_main(app, config, model_flags_given, flags, f, common, *comm);
  }

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
  options.warmup_steps = rc.trainer.schedule.warmup_steps;
  options.lr_scale = rc.trainer.schedule.scale;
  options.task = task == "copy" ? tt::train::SyntheticTask::copy : tt::train::SyntheticTask::random;
  const std::unique_ptr<tt::dist::Communicator> comm = tt::dist::make_communicator("tt-train");
  return synthetic_main(config, common, init_dir, output_dir, options, task, *comm, f.precision);
  });
}

}  // namespace

int main(int argc, char** argv) { return tt::cli::run_tool("tt-train", argc, argv, &train_main); }
