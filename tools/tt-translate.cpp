// tt-translate: text in on stdin, translations out on stdout, one line per line, with batched beam search
// over one model directory or an ensemble (-m a b c). See man tt-translate.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "cli/app.h"
#include "cli/common_options.h"
#include "cli/decode_options.h"
#include "cli/decode_workers.h"
#include "cli/freed_memory.h"
#include "cli/openmp_env.h"
#include "cli/run_tool.h"
#include "data/spm_tokenizer.h"
#include "decode/score_run.h"
#include "decode/translator.h"
#include "io/model_dir.h"
#include "io/model_vocab.h"
#include "nn/transformer.h"
#include "util/error.h"
#include "util/file_bytes.h"
#include "util/text_io.h"

namespace {

struct Flags {
  std::vector<std::string> models;
  std::string input = "-";
  std::string input_format = "text", output_format = "text";
  std::string alignment = "none";
  std::string scores_file;
  std::string score;  // --score FILE: score these targets instead of searching
  std::string shortlist;  // --shortlist FILE (tt-convert shortlist)
  bool token_scores = false;
  std::string score_feature = "tt=";
  std::string compute_type = "float32";
  int workers = 0;  // 0: auto (cli/decode_workers.h)
  bool scores = false;
};

// The first model's SentencePiece files; every other member must carry the same target model.
struct Vocab {
  std::optional<tt::io::Vocabulary> source, target;
};

// What makes a target vocabulary: the SentencePiece model and, for an imported model, its piece table.
std::string target_vocab_bytes(const tt::io::VocabFiles& files) {
  std::string bytes = tt::util::read_file_bytes(files.target);
  if (!files.target_ids.empty()) bytes += '\0' + tt::util::read_file_bytes(files.target_ids);
  return bytes;
}

int translate_main(int argc, char** argv) {
  CLI::App app{"Translate text with a tt model: lines on stdin, translations on stdout."};
  tt::cli::configure_app(app, "tt-translate");
  Flags f;
  tt::cli::DecodeOptions d;
  tt::decode::TranslatorOptions& o = d.translator;
  tt::cli::CommonOptions common;
  app.add_option("-m,--model", f.models, "Model directory (several: an ensemble)")
      ->type_name("DIR")->required()->expected(1, -1);
  app.add_option("-i,--input", f.input, "Input file ('-': stdin)")->type_name("FILE");
  app.add_option("--input-format", f.input_format, "Input lines: text, pieces or ids")
      ->check(CLI::IsMember({"text", "pieces", "ids"}));
  app.add_option("--output-format", f.output_format, "Output lines: text, pieces or ids")
      ->check(CLI::IsMember({"text", "pieces", "ids"}));
  tt::cli::add_search_options(app, d, "Search");
  app.add_option("--nbest", o.search.nbest, "Print the N best per line (Moses format; N <= beam)")
      ->check(CLI::Range(1, 1024))->group("Search");
  tt::cli::add_target_options(app, d, "Search");
  app.add_option("--alternatives", o.search.alternatives,
                 "Print N alternatives per line (Moses format): the N best tokens after the prefix, each completed "
                 "by the search (an autocomplete box's choices)")
      ->check(CLI::Range(1, 1024))->group("Search");
  const std::string g = "Output";
  app.add_flag("--scores", f.scores, "Print the score of each line on stderr")->group(g);
  app.add_option("--scores-file", f.scores_file, "Write the score of each line to FILE")->type_name("FILE")->group(g);
  app.add_option("--alignment", f.alignment, "Append ' ||| ' and alignments: hard or soft (Marian's formats)")
      ->check(CLI::IsMember({"none", "hard", "soft"}))->group(g);
  const std::string sc = "Scoring given translations";
  app.add_option("--score", f.score,
                 "Print the model's score of FILE's translations instead of searching: one target line per input "
                 "line ('LOG_PROB SCORE'), or a Moses n-best list (its lines with the score appended as a feature)")
                     ->type_name("FILE")->group(sc);
  app.add_flag("--token-scores", f.token_scores, "With --score: append ' ||| ' and each token's log-probability")
      ->group(sc);
  app.add_option("--score-feature", f.score_feature, "With --score on an n-best list: the feature's name")
      ->capture_default_str()->group(sc);
  app.add_option("--shortlist", f.shortlist,
                 "Compute the output layer over each batch's likely target pieces only, from FILE (made by "
                 "tt-convert shortlist): faster with large vocabularies; translations may change slightly")
      ->type_name("FILE")->group("Search");
  tt::cli::add_sampling_options(app, d, "Sampling");
  tt::cli::add_seed_option(app, common, "Sampling seed (the same seed, the same samples)")->group("Sampling");
  tt::cli::add_batching_options(app, d, "Batching");
  app.add_flag("--flush", o.flush, "Translate and print each line as soon as it is read")->group("Batching");
  app.add_option("--workers", f.workers,
                 "Batches searched at once, each by a worker with --threads/N threads (CPU; weights shared; 0: "
                 "one per thread for models of d_model <= 256, else 1)")
      ->check(CLI::Range(0, tt::cli::max_threads))->capture_default_str()->group("Batching");
  app.add_option("--compute-type", f.compute_type,
                 "Matrix products with the weights: float32, int8 (8-bit weights and activations, int32 sums) or "
                 "bf16 (bfloat16 operands, float32 sums; needs AVX512-BF16 or AMX): faster, slightly less exact; "
                 "auto: the fastest this device runs (int8 with VNNI or AMX, else bf16 where it has it, else "
                 "float32) (default: float32, or the type a tt-convert quantize model stores)")
      ->check(CLI::IsMember({"float32", "int8", "bf16", "auto"}));
  tt::cli::add_threads_option(app, common);
  tt::cli::add_device_option(app, common);
  tt::cli::add_quiet_flag(app, common);
  tt::cli::parse(app, argc, argv);

  if (o.search.nbest > o.search.beam)
    throw tt::UsageError("--nbest " + std::to_string(o.search.nbest) + " exceeds --beam " +
                         std::to_string(o.search.beam), "raise --beam to at least --nbest");
  d.finish();
  o.search.seed = common.seed;
  o.input_format = tt::decode::parse_text_format(f.input_format);
  o.output_format = tt::decode::parse_text_format(f.output_format);
  o.alignment = tt::decode::parse_alignment_format(f.alignment);
  if (f.input == "-" && isatty(STDIN_FILENO)) o.flush = true;  // interactive: line at a time
  if (!f.score.empty() && (o.search.sampling || o.search.nbest > 1 || f.alignment != "none" ||
                           o.search.alternatives > 0 || !d.target_prefix.empty() || !d.constraints.empty()))
    throw tt::UsageError("--score scores given translations: it does not combine with --sampling, --nbest, "
                         "--alignment, --alternatives, --target-prefix or --constraints");
  if (!f.shortlist.empty() && !f.score.empty())
    throw tt::UsageError("--score gives the model's own log-probabilities: it does not combine with --shortlist");
  if ((f.token_scores || app.count("--score-feature")) && f.score.empty())
    throw tt::UsageError(std::string(f.token_scores ? "--token-scores" : "--score-feature") + " needs --score FILE");

  const int threads = tt::cli::resolve_threads(common.threads);
  if (f.workers > threads)
    throw tt::UsageError("--workers " + std::to_string(f.workers) + " exceeds --threads " + std::to_string(threads),
                          "give each worker at least one thread: raise --threads or lower --workers");
  tt::cli::TranslatorFiles target_files(d);  // opened before the models load: a missing file fails at once
  std::vector<tt::nn::ModelConfig> configs;
  std::vector<nlohmann::json> full_configs(f.models.size());
  int max_d_model = 0;
  for (size_t i = 0; i < f.models.size(); ++i) {
    configs.push_back(tt::io::load_model_config(f.models[i], &full_configs[i]));
    max_d_model = std::max(max_d_model, configs.back().d_model);
  }
  if (!f.shortlist.empty()) {  // read before the models: a bad file fails at once
    auto list = std::make_shared<tt::decode::Shortlist>(tt::decode::Shortlist::load(f.shortlist));
    for (size_t i = 0; i < configs.size(); ++i)
      if (list->source_vocab() != configs[i].vocab_size_src || list->target_vocab() != configs[i].vocab_size_tgt)
        throw tt::ConfigError("--shortlist " + f.shortlist + " is for vocabularies of " +
                                  std::to_string(list->source_vocab()) + " / " + std::to_string(list->target_vocab()) +
                                  " pieces; " + f.models[i] + " has " + std::to_string(configs[i].vocab_size_src) +
                                  " / " + std::to_string(configs[i].vocab_size_tgt),
                              "build one for this model: tt-convert shortlist MODEL --train SRC TGT");
    o.shortlist = std::move(list);
  }
  if (f.compute_type == "auto") f.compute_type = tt::cli::fastest_compute_type(common.device);
  // A model stored quantized (tt-convert quantize) runs at its stored type unless told otherwise.
  if (!app.count("--compute-type")) {
    const std::string stored = tt::io::stored_weight_type(full_configs[0], f.models[0] + "/config.json");
    bool same = true;
    for (size_t i = 1; i < f.models.size(); ++i)
      same = same && tt::io::stored_weight_type(full_configs[i], f.models[i] + "/config.json") == stored;
    if (same) f.compute_type = stored;
    // A device without products of that type (bf16 on an older CPU, int8 on CUDA) runs it dequantized.
    if (same && stored != "float32") {
      try {
        tt::cli::make_decoding_backend(common.device, 1, stored);
      } catch (const tt::ConfigError& e) {
        if (!common.quiet)
          std::fprintf(stderr, "tt-translate: note: %s; running the %s model at float32\n", e.what(), stored.c_str());
        f.compute_type = "float32";
      }
    }
  }
  int workers = f.workers > 0 ? f.workers : tt::cli::auto_workers(max_d_model, threads);
  bool invariant = false;
  auto make_backend = [&](int w) {
    return tt::cli::make_decoding_backend(common.device, tt::cli::worker_threads(w, workers, threads), f.compute_type,
                                          w == 0 ? &invariant : nullptr);
  };
  auto backend = make_backend(0);
  if (workers > 1 && backend->device() != tt::backend::Device::cpu) {  // workers share weights in host memory
    if (f.workers > 1)
      throw tt::ConfigError("--workers " + std::to_string(f.workers) + " runs on the CPU only, not on " +
                                backend->name(), "use --workers 1 on a GPU, or --device cpu");
    workers = 1;
    backend = make_backend(0);
  }
  std::vector<std::unique_ptr<tt::nn::Transformer>> owned;
  std::vector<tt::io::AdoptedWeights> adopted;  // weights stored quantized, taken as they are
  std::vector<tt::nn::Transformer*> models;
  Vocab vocab;
  std::string target_spm_bytes;
  for (size_t i = 0; i < f.models.size(); ++i) {
    const nlohmann::json& full = full_configs[i];
    owned.push_back(std::make_unique<tt::nn::Transformer>(configs[i], *backend, tt::nn::Usage::inference));
    adopted.push_back(tt::io::load_model_weights(f.models[i], owned.back()->params(), backend.get()));
    models.push_back(owned.back().get());
    const bool needs_spm = o.input_format != tt::decode::TextFormat::ids ||
                           o.output_format != tt::decode::TextFormat::ids;
    if (!needs_spm) continue;
    const tt::io::VocabFiles files = tt::io::vocab_files(f.models[i], full);
    if (i == 0) {
      tt::io::ModelTokenizers spm = tt::io::load_tokenizers(f.models[i], full, configs[i]);
      vocab.source.emplace(std::move(spm.source));
      vocab.target.emplace(std::move(spm.target));
      target_spm_bytes = target_vocab_bytes(files);
    } else if (target_vocab_bytes(files) != target_spm_bytes) {
      throw tt::ConfigError(f.models[i] + ": its target vocabulary (SentencePiece model, piece table) differs from " +
                                f.models[0] + "'s",
                            "ensemble only models trained with the same target vocabulary");
    } else {  // every member reads the first one's source pieces and writes its target ids
      tt::io::check_vocab_size(*vocab.source, configs[i].vocab_size_src, "source", f.models[i]);
      tt::io::check_vocab_size(*vocab.target, configs[i].vocab_size_tgt, "target", f.models[i]);
    }
  }
  // Workers 2..N: their own backend (threads, scratch, decoding buffers), the first worker's weights and
  // its packed copy of them.
  std::vector<std::unique_ptr<tt::backend::Backend>> worker_backends;
  std::vector<std::unique_ptr<tt::nn::Transformer>> worker_models;
  std::vector<std::vector<tt::nn::Transformer*>> replicas;
  for (int w = 1; w < workers; ++w) {
    worker_backends.push_back(make_backend(w));
    if (!worker_backends.back()->share_packed_weights(*backend))
      for (const auto& weights : adopted) tt::io::adopt_weights(*worker_backends.back(), weights);
    std::vector<tt::nn::Transformer*> replica;
    for (const auto& m : owned) {
      worker_models.push_back(std::make_unique<tt::nn::Transformer>(*m, *worker_backends.back()));
      replica.push_back(worker_models.back().get());
    }
    replicas.push_back(std::move(replica));
  }
  // After the workers' backends and models: the translator's decoding buffers belong to them.
  tt::decode::Translator translator(models, vocab.source ? &*vocab.source : nullptr,
                                    vocab.target ? &*vocab.target : nullptr, o);
  for (const auto& replica : replicas) translator.add_worker(replica);

  if (!common.quiet) {
    const std::string runs =
        workers > 1 ? std::to_string(workers) + " workers of " + backend->name() : backend->name();
    const tt::decode::SearchOptions& so = o.search;
    char search[160];
    if (!f.score.empty())
      std::snprintf(search, sizeof search, "scoring the translations in %s (no search)", f.score.c_str());
    else if (so.sampling)
      std::snprintf(search, sizeof search, "sampling %s (temperature %g), %d sample%s per line", d.sampling.c_str(),
                    static_cast<double>(so.temperature), so.beam, so.beam == 1 ? "" : "s");
    else if (so.alternatives > 0)
      std::snprintf(search, sizeof search, "beam %d, %d alternatives per line", so.beam, so.alternatives);
    else
      std::snprintf(search, sizeof search, "beam %d", so.beam);
    std::fprintf(stderr, "tt-translate: %s, compute %s, %zu model%s, %s, length penalty %s (alpha %g)%s\n",
                 runs.c_str(), f.compute_type.c_str(), models.size(), models.size() == 1 ? "" : "s", search,
                 d.length_penalty.c_str(), static_cast<double>(so.alpha), invariant ? ", batch-invariant" : "");
    if (o.shortlist)
      std::fprintf(stderr, "tt-translate: shortlist %s: the %d most frequent target pieces and up to %d per source piece\n",
                   f.shortlist.c_str(), o.shortlist->frequent(), o.shortlist->best_per_source());
    if (!invariant)
      std::fprintf(stderr, "tt-translate: note: on this device outputs may depend on --batch-size\n");
    if (f.compute_type == "int8" && !backend->int8_keeps_8_bits())
      std::fprintf(stderr, "tt-translate: note: no int8 dot-product instructions (VNNI) for oneDNN here (%s): "
                           "the weights get 7 bits, not 8\n", backend->matmul_isa().c_str());
  }
  std::ofstream scores_out;
  if (!f.scores_file.empty()) {
    scores_out.open(f.scores_file);
    if (!scores_out) throw tt::IoError(f.scores_file + ": cannot write (" + std::strerror(errno) + ")");
  }
  tt::decode::TranslatorOutput out;
  out.text = [](const std::string& t) { tt::util::write_stdout(t); };
  if (!f.scores_file.empty())
    out.scores = [&](const std::string& t) { scores_out << t; };
  else if (f.scores)
    out.scores = [](const std::string& t) { std::fputs(t.c_str(), stderr); };
  out.warn = [&](const std::string& w) {
    if (!common.quiet) std::fprintf(stderr, "tt-translate: warning: %s\n", w.c_str());
  };
  out.flush = [] { tt::util::flush_stdout(); };
  tt::util::LineReader in(f.input);
  if (!f.score.empty()) {
    tt::decode::ScoreRunOptions so;
    so.token_scores = f.token_scores;
    so.feature = f.score_feature;
    tt::decode::ScoreRun scoring(models, translator, vocab.target ? &*vocab.target : nullptr, o, so);
    tt::util::LineReader targets(f.score);
    scoring.run(in, targets, out);
    tt::util::flush_stdout();
    return 0;
  }
  translator.run(in, out, target_files.inputs());
  tt::util::flush_stdout();
  if (scores_out.is_open() && !scores_out.flush())
    throw tt::IoError(f.scores_file + ": write failed (" + std::strerror(errno) + ")");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  tt::cli::use_short_openmp_spin(argv);
  tt::cli::return_large_frees_to_system();
  return tt::cli::run_filter("tt-translate", argc, argv, &translate_main);
}
