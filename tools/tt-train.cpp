// tt-train: resolve a model configuration (preset < --config file < flags), then print it (--dry-run),
// train on synthetic batches (--synthetic-steps: the smoke run and the speed benchmark), or train on a
// parallel corpus into a run directory (--train ... -o RUN; --resume RUN continues one).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "backend/backend.h"
#include "cli/app.h"
#include "cli/common_options.h"
#include "cli/duration.h"
#include "cli/flag_names.h"
#include "cli/input_files.h"
#include "cli/model_options.h"
#include "cli/openmp_env.h"
#include "cli/run_tool.h"
#include "dist/communicator.h"
#include "io/model_dir.h"
#include "io/model_vocab.h"
#include "nn/config.h"
#include "nn/transformer.h"
#include "train/checkpoint.h"
#include "train/corpus_run.h"
#include "train/memory_estimate.h"
#include "train/precision.h"
#include "train/progress_printer.h"
#include "train/resume.h"
#include "train/run_config.h"
#include "train/run_report.h"
#include "train/synthetic.h"
#include "util/error.h"
#include "util/file_bytes.h"
#include "util/signals.h"

namespace {

namespace fs = std::filesystem;
using tt::nn::ModelConfig;

struct Flags {
  std::string preset = "base", config, init, output, precision = "fp32";
  bool dry_run = false;
  tt::cli::ModelOptions model;
  tt::cli::CommonOptions common;
  // Corpus training.
  std::vector<std::string> train, valid;
  std::string spm, src_spm, tgt_spm, resume, log;
  double lr = 0;
  tt::train::RunConfig run;
  // Synthetic training.
  int64_t synthetic_steps = 0;
  std::string task = "random";
  int batch_size = 64, src_len = 32, tgt_len = 32;
};

void add_flags(CLI::App& app, Flags& f) {
  auto& rc = f.run;
  app.add_option("--preset", f.preset, "Architecture preset: base, big, small, tiny")
      ->check(CLI::IsMember({"base", "big", "small", "tiny"}))
      ->capture_default_str();
  app.add_option("--config", f.config, "JSON model config (or a model's config.json); flags override it")
      ->type_name("FILE");
  tt::cli::add_model_options(app, f.model);
  app.add_flag("--dry-run", f.dry_run, "Print the resolved config and parameter count as JSON; do not train");

  const char* d = "Data";
  app.add_option("--train", f.train,
                 "Training corpus: SRC TGT (raw text, line N of one translates line N of the other); repeat it "
                 "for several corpora")
      ->type_name("FILE")->type_size(2)->expected(1, 1 << 20)->group(d);
  app.add_option("--corpus-weights", rc.data.corpus_weights,
                 "One weight per --train corpus: each epoch draws its pairs in proportion (default: each pair once)")
      ->group(d);
  app.add_option("--spm-alpha", rc.data.spm_alpha,
                 "Subword sampling: segment the training text anew each epoch with SentencePiece's sampling "
                 "(unigram smoothing, BPE dropout; 0: off)")
      ->group(d);
  app.add_option("--spm-nbest", rc.data.spm_nbest, "With --spm-alpha: sample from the N best segmentations (-1: all)")
      ->group(d);
  app.add_option("--valid", f.valid, "Validation corpus: SRC TGT")->type_name("FILE")->expected(2)->group(d);
  auto* spm = app.add_option("--spm", f.spm, "Joint SentencePiece model (source and target)")
      ->type_name("FILE")->group(d);
  auto* src_spm = app.add_option("--src-spm", f.src_spm, "Source SentencePiece model (separate vocabularies)")
      ->type_name("FILE")->group(d);
  auto* tgt_spm = app.add_option("--tgt-spm", f.tgt_spm, "Target SentencePiece model (separate vocabularies)")
      ->type_name("FILE")->group(d);
  spm->excludes(src_spm)->excludes(tgt_spm);
  app.add_option("--max-len", rc.data.filter.max_len, "Drop pairs with a side longer than N pieces")
      ->capture_default_str()->group(d);
  app.add_option("--max-len-ratio", rc.data.filter.max_len_ratio, "Drop pairs whose length ratio exceeds R (0: off)")
      ->check(CLI::NonNegativeNumber)->group(d);
  app.add_option("--batch-tokens", rc.data.batch_tokens,
                 "Padded source and target tokens per batch, at most (a longer pair is a batch of its own)")
      ->check(CLI::PositiveNumber)->capture_default_str()->group(d);

  const char* r = "Recipe";
  app.add_option("--accum", rc.trainer.accum, "Batches accumulated per optimizer step")
      ->check(CLI::PositiveNumber)->capture_default_str()->group(r);
  app.add_option("--warmup-steps", rc.trainer.schedule.warmup_steps, "Learning-rate warm-up steps")
      ->check(CLI::PositiveNumber)->capture_default_str()->group(r);
  auto* lr_scale = app.add_option("--lr-scale", rc.trainer.schedule.scale, "Factor on the paper's learning rate")
                       ->capture_default_str()->group(r);
  app.add_option("--lr", f.lr, "Peak learning rate: the inverse-sqrt schedule instead of the paper's")
      ->check(CLI::PositiveNumber)->group(r)->excludes(lr_scale);
  app.add_option("--clip-norm", rc.trainer.clip_norm, "Clip the gradient's L2 norm to X (0: off)")
      ->check(CLI::NonNegativeNumber)->group(r);
  app.add_option("--weight-decay", rc.trainer.adam.weight_decay, "Decoupled weight decay (AdamW; 0: off)")
      ->check(CLI::NonNegativeNumber)->group(r);
  app.add_option("--ema-decay", rc.trainer.ema_decay,
                 "Keep a moving average of the weights, decay D (e.g. 0.9999; 0: off): validation, run/best and "
                 "each checkpoint's model.safetensors use it")
      ->group(r);

  const char* st = "Stopping, validation, checkpoints";
  app.add_option("--max-steps", rc.run.max_steps, "Stop after N optimizer steps")->check(CLI::NonNegativeNumber)->group(st);
  app.add_option("--max-epochs", rc.run.max_epochs, "Stop after N epochs")->check(CLI::NonNegativeNumber)->group(st);
  app.add_option("--time-limit", rc.run.time_limit_s, "Stop after this long (90s, 10m, 2h)")
      ->transform(tt::cli::duration_validator())->group(st);
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
  app.add_option("--log", f.log, "JSON-lines log file (default: RUN/log.jsonl)")->type_name("FILE")->group(st);
  auto* resume = app.add_option("--resume", f.resume, "Continue the run in this directory from its last checkpoint")
                     ->type_name("DIR")
                     ->group(st);

  const char* s = "Synthetic training (smoke run, benchmark)";
  app.add_option("--synthetic-steps", f.synthetic_steps, "Train N steps on synthetic batches")->group(s);
  app.add_option("--synthetic-task", f.task, "random (the benchmark's batches) or copy (learnable)")
      ->check(CLI::IsMember({"random", "copy"}))->capture_default_str()->group(s);
  app.add_option("--batch-size", f.batch_size, "Sentences per batch")->capture_default_str()->group(s);
  app.add_option("--src-len", f.src_len, "Source tokens per sentence")->capture_default_str()->group(s);
  app.add_option("--tgt-len", f.tgt_len, "Target tokens per sentence")->capture_default_str()->group(s);
  app.add_option("--init", f.init, "Start from this model directory (config.json + model.safetensors)")
      ->type_name("DIR")->excludes("--config")->excludes("--preset")->group(s);
  auto* output = app.add_option("-o,--output", f.output,
                                "The run directory (corpus training) or model directory (synthetic)")
                      ->type_name("DIR");
  resume->excludes(output)->excludes("--init")->excludes("--synthetic-steps");
  app.add_option("--precision", f.precision, "Matrix products: fp32, or bf16 operands with fp32 accumulation "
                 "(needs AVX512-BF16 or AMX), or auto: bf16 where the device has it and it is faster, else fp32")
      ->check(CLI::IsMember({"fp32", "bf16", "auto"}))->capture_default_str();
  tt::cli::add_seed_option(app, f.common, "Seed for initialisation, batches and dropout");
  tt::cli::add_threads_option(app, f.common);
  tt::cli::add_device_option(app, f.common);
  tt::cli::add_quiet_flag(app, f.common, "No progress lines on stderr");
}

// Usage errors (exit 2) and unreadable inputs (exit 1, naming the file), before any work.
void check_request(const Flags& f) {
  // Files are data, not usage: a missing or unreadable one is exit 1 naming it (man 7 tt).
  if (!f.config.empty()) tt::cli::check_input_file(f.config, "--config file");
  tt::cli::check_input_files(f.train, "--train file");
  tt::cli::check_input_files(f.valid, "--valid file");
  for (const std::string* model : {&f.spm, &f.src_spm, &f.tgt_spm})
    if (!model->empty()) tt::cli::check_input_file(*model, "SentencePiece model");
  for (const std::string* dir : {&f.resume, &f.init})
    if (std::error_code ec; !dir->empty() && !fs::is_directory(*dir, ec))
      throw tt::IoError(*dir + ": not a directory", "give a run directory (--resume) or model directory (--init)");
  const bool corpus_run = !f.train.empty() || !f.resume.empty();
  auto usage = [](const std::string& what) {
    std::cerr << "tt-train: error: " << what << "\nRun 'tt-train --help' for usage.\n";
    throw tt::cli::ExitRequest{2};
  };
  if (!f.dry_run && f.synthetic_steps == 0 && !corpus_run)
    usage("nothing to do: give --train SRC TGT with --spm and -o RUN, --resume RUN, --dry-run or --synthetic-steps N");
  if (corpus_run && f.synthetic_steps > 0) usage("--synthetic-steps and --train/--resume exclude each other");
  if (f.train.size() % 2 != 0) usage("--train takes two files each time: SRC TGT");
  if (f.synthetic_steps > 0 && f.run.trainer.ema_decay > 0) usage("--ema-decay averages a corpus run's weights, not --synthetic-steps");
  if (f.synthetic_steps > 0 && f.run.data.spm_alpha > 0) usage("--spm-alpha samples a corpus's segmentation, not --synthetic-steps");
  if (!f.train.empty() && f.resume.empty()) {
    if (f.output.empty()) usage("--train needs -o RUN, the run directory");
    if (f.spm.empty() && (f.src_spm.empty() || f.tgt_spm.empty()) && f.init.empty())
      usage("--train needs --spm MODEL (joint vocabulary), both --src-spm and --tgt-spm, or --init MODEL (its own)");
  }
}

// Option values the library refuses before reading anything (out of range, at odds with another option)
// are usage errors, exit 2 (man 7 tt), like the values CLI11 refuses; named by flag, with the hint.
void check_usage(const tt::cli::FlagNames& flag_for, const std::function<void()>& check) {
  try {
    check();
  } catch (tt::ConfigError& e) {
    e.name_options(flag_for);
    std::cerr << "tt-train: error: " << e.what() << "\n";
    if (!e.hint().empty()) std::cerr << "tt-train: hint: " << e.hint() << "\n";
    throw tt::cli::ExitRequest{2};
  }
}

// preset < --config file (or --init's or the resumed run's config) < flags.
ModelConfig resolve_model(const CLI::App& app, const Flags& f) {
  ModelConfig config = tt::nn::preset(f.preset);
  if (!f.resume.empty() && app.get_option("--preset")->count() == 0 && f.config.empty()) {
    config = tt::io::load_model_config(tt::train::last_checkpoint(f.resume));  // flags apply to the run's config
  } else if (!f.init.empty()) {
    config = tt::io::load_model_config(f.init);
    tt::cli::check_init_architecture(f.model, config, f.init);
  } else if (!f.config.empty()) {
    config = tt::io::read_model_config_file(f.config, config);
  }
  tt::cli::apply(f.model, config);
  return config;
}

std::string absolute(const std::string& path) { return path.empty() ? path : fs::absolute(path).lexically_normal().string(); }

// Fine-tuning reads the text as the model was trained to: with its own SentencePiece model(s), taken
// from the model directory unless given; a given one must be the same file (its ids are the weights' rows).
void use_init_vocabulary(const std::string& init, tt::train::DataOptions& data) {
  nlohmann::json full;
  tt::io::load_model_config(init, &full);
  const tt::io::VocabFiles own = tt::io::vocab_files(init, full);
  if (!own.source_ids.empty())
    throw tt::ConfigError("--init " + init + ": its SentencePiece pieces reach the model through a piece table (" +
                              own.source_ids + "), which tt-train does not read",
                          "translate with the model; fine-tune models trained by tt-train");
  for (auto [given, theirs, side] : {std::tuple{&data.source_spm, &own.source, "source"},
                                     std::tuple{&data.target_spm, &own.target, "target"}})
    if (given->empty())
      *given = *theirs;
    else if (tt::util::read_file_bytes(*given) != tt::util::read_file_bytes(*theirs))
      throw tt::ConfigError("--init " + init + ": the " + side + " SentencePiece model " + *given + " is not the model's own (" +
                                *theirs + ")",
                            "fine-tuning keeps the model's vocabulary: leave out --spm to use its own");
}

// --precision's pick, the same on every rank (auto times products on each; the first rank's pick holds), and
// why, in the header.
std::string pick_precision(tt::backend::Backend& backend, const Flags& f, tt::dist::Communicator& comm) {
  const tt::train::PrecisionPick pick = tt::train::resolve_precision(backend, f.precision);
  char bf16 = pick.precision == "bf16" ? 1 : 0;
  comm.broadcast(&bf16, 1, 0);
  if (!f.common.quiet && comm.is_root() && !pick.reason.empty()) std::cerr << "tt-train: " << pick.reason << "\n";
  return bf16 ? "bf16" : "fp32";
}

int corpus_main(const CLI::App& app, const tt::cli::FlagNames& flag_for, const ModelConfig& config, Flags& f) {
  // Before any thread starts (OpenMP's, MPI's): they inherit its blocked SIGINT and SIGTERM (util/signals.h).
  tt::util::SignalGuard signals;
  tt::train::CorpusRunSpec spec;
  tt::train::RunConfig& rc = spec.options = f.run;
  rc.run.run_dir = f.output;
  if (!f.train.empty()) {
    rc.data.train_src = absolute(f.train[0]);
    rc.data.train_tgt = absolute(f.train[1]);
    for (size_t i = 2; i < f.train.size(); ++i) rc.data.train_more.push_back(absolute(f.train[i]));
  }
  if (!f.valid.empty()) {
    rc.data.valid_src = absolute(f.valid[0]);
    rc.data.valid_tgt = absolute(f.valid[1]);
  }
  rc.data.source_spm = absolute(f.spm.empty() ? f.src_spm : f.spm);
  rc.data.target_spm = absolute(f.spm.empty() ? f.tgt_spm : f.spm);
  if (!f.init.empty()) use_init_vocabulary(absolute(f.init), rc.data);
  spec.init_dir = absolute(f.init);
  if (app.get_option("--lr")->count() > 0) {
    rc.trainer.schedule.kind = tt::train::LrScheduleKind::inverse_sqrt;
    rc.trainer.schedule.peak_lr = f.lr;
  }
  rc.trainer.seed = f.common.seed;
  rc.log = absolute(f.log);
  spec.model = config;
  spec.resume_dir = f.resume;
  spec.model_given = app.get_option("--preset")->count() > 0 || !f.config.empty() || tt::cli::model_options_given(app);
  for (const tt::train::RunOption& o : tt::train::run_options())
    if (app.get_option(flag_for(o.name))->count() > 0) spec.given_options.push_back(o.name);
  spec.vocab = {f.model.vocab_size, f.model.src_vocab_size, f.model.tgt_vocab_size};
  spec.threads = tt::cli::resolve_threads(f.common.threads);
  if (f.resume.empty()) check_usage(flag_for, [&] { tt::train::check_run_config(rc, config); });

  const auto comm = tt::dist::make_communicator("tt-train");
  auto backend = tt::backend::make_backend(f.common.device, f.common.threads);
  spec.precision = pick_precision(*backend, f, *comm);
  tt::train::CorpusRun run(spec, *backend, *comm);
  for (const std::string& note : run.notes()) std::cerr << "tt-train: note: " << note << "\n";  // even with -q
  if (!f.common.quiet && comm->is_root())
    for (const std::string& line : run.summary()) std::cerr << "tt-train: " << line << "\n";
  tt::train::ProgressPrinter progress(std::cerr, f.common.quiet, ::isatty(2) != 0);
  tt::train::RunCallbacks callbacks;
  callbacks.on_step = [&](const tt::train::StepView& v) { progress.step(v); };
  callbacks.on_record = [&](const nlohmann::json& j) {
    progress.record(j);
    if (j["type"] == "end" && j["reason"] != "error") std::cout << j.dump() << "\n";  // the summary, for scripts
  };
  signals.arm();
  const tt::train::RunResult result = run.run(&signals, callbacks);
  return result.reason == tt::train::StopReason::signal ? tt::util::SignalGuard::exit_status(result.signal) : 0;
}

int synthetic_main(const tt::cli::FlagNames& flag_for, const ModelConfig& config, const Flags& f) {
  tt::train::SyntheticOptions o;
  o.steps = f.synthetic_steps;
  o.batch_size = f.batch_size;
  o.src_len = f.src_len;
  o.tgt_len = f.tgt_len;
  o.seed = f.common.seed;
  o.warmup_steps = f.run.trainer.schedule.warmup_steps;
  o.lr_scale = f.run.trainer.schedule.scale;
  o.task = f.task == "copy" ? tt::train::SyntheticTask::copy : tt::train::SyntheticTask::random;
  check_usage(flag_for, [&] { tt::train::check_synthetic_options(config, o); });
  const auto comm = tt::dist::make_communicator("tt-train");
  auto backend = tt::backend::make_backend(f.common.device, f.common.threads);
  const std::string precision = pick_precision(*backend, f, *comm);
  const int longest = std::max(o.src_len, o.tgt_len);
  tt::train::check_training_fits(
      config, {int64_t{o.batch_size} * longest, longest, precision == "bf16", "batch_size"},
      backend->device() == tt::backend::Device::cpu ? tt::nn::physical_memory_bytes() : 0);
  const std::string precision_words = tt::train::use_precision(*backend, precision);
  tt::nn::Transformer model(config, *backend);
  if (!f.init.empty()) tt::io::load_model_weights(f.init, model.params());
  else model.init_parameters(f.common.seed);
  tt::train::broadcast_parameters(*comm, model.params());
  const bool talk = !f.common.quiet && comm->is_root();
  if (talk)
    std::cerr << "tt-train: " << config.parameter_count() << " parameters on " << backend->name() << ", "
              << precision_words << ", batch " << o.batch_size << " x " << o.src_len << " -> " << o.tgt_len
              << (comm->size() > 1 ? " on each of " + std::to_string(comm->size()) + " ranks (" + comm->name() + ")" : "")
              << "\n";
  const double step_tokens = static_cast<double>(o.batch_size) * o.tgt_len * comm->size();
  const auto result = tt::train::train_synthetic(model, o, [&](const tt::train::StepReport& r) {
    if (!talk) return;
    char line[160];
    std::snprintf(line, sizeof line, "step %lld/%lld  loss %.4f  lr %.3g  %.3f s  %.0f tgt tok/s\n",
                  static_cast<long long>(r.step), static_cast<long long>(o.steps), r.loss, r.lr, r.seconds,
                  step_tokens / r.seconds);
    std::cerr << line;
  }, comm.get());
  if (!comm->is_root()) return 0;
  if (!f.output.empty()) {
    tt::io::save_model_dir(f.output, config, model.params());
    if (!f.common.quiet) std::cerr << "tt-train: saved " << f.output << "\n";
  }
  const tt::train::SyntheticRunInfo info{backend->name(), precision, backend->matmul_isa(), f.task,
                                         f.common.threads, comm->size()};
  std::cout << tt::train::synthetic_record(config, o, result, info).dump() << "\n";
  return 0;
}

int train_main(int argc, char** argv) {
  CLI::App app{"Train a Transformer translation model on a parallel corpus (--train ... -o RUN), resume a run\n"
               "(--resume RUN), print the resolved configuration (--dry-run) or train on synthetic batches\n"
               "(--synthetic-steps), the smoke run and speed benchmark."};
  tt::cli::configure_app(app, "tt-train");
  Flags f;
  add_flags(app, f);
  tt::cli::parse(app, argc, argv);
  // The library names options by field; these flags name them for the user.
  const tt::cli::FlagNames flag_for(
      app, {{"time_limit_s", "--time-limit"}, {"steps", "--synthetic-steps"}, {"output", "-o"}});
  return tt::cli::with_flag_names(flag_for, [&] {
    check_request(f);
    const ModelConfig config = resolve_model(app, f);
    if ((!f.train.empty() || !f.resume.empty()) && !f.dry_run) return corpus_main(app, flag_for, config, f);
    config.validate();
    if (f.dry_run) {
      nlohmann::json out = tt::nn::to_json(config);
      out["parameters"] = config.parameter_count();
      std::cout << out.dump() << "\n";
      return 0;
    }
    return synthetic_main(flag_for, config, f);
  });
}

}  // namespace

int main(int argc, char** argv) {
  tt::cli::use_short_openmp_spin(argv);
  return tt::cli::run_tool("tt-train", argc, argv, &train_main);
}
