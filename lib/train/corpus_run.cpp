#include "train/corpus_run.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "io/model_dir.h"
#include "io/model_vocab.h"
#include "nn/config.h"
#include "train/checkpoint.h"
#include "train/memory_estimate.h"
#include "train/precision.h"
#include "train/resume.h"
#include "train/run_dir.h"
#include "train/run_report.h"
#include "train/stale_temporaries.h"
#include "train/valid_bleu.h"
#include "util/error.h"
#include "util/text_io.h"

namespace fs = std::filesystem;

namespace tt::train {

void check_run_config(const RunConfig& o, const nn::ModelConfig& model) {
  const int max_len = o.data.filter.max_len;
  if (max_len < 1)
    throw ConfigError(option_ref("max_len") + " (" + std::to_string(max_len) + ") must be at least 1");
  if (max_len + 1 > model.max_positions)
    throw ConfigError(option_ref("max_len") + " " + std::to_string(max_len) + " needs max_positions > " +
                          std::to_string(max_len) + " (the model has " + std::to_string(model.max_positions) + ")",
                      "lower " + option_ref("max_len") + " or raise " + option_ref("max_positions"));
  if (o.data.batch_tokens < 1 || o.data.batch_tokens > std::numeric_limits<int32_t>::max())
    throw ConfigError(option_ref("batch_tokens") + " (" + std::to_string(o.data.batch_tokens) +
                      ") must be between 1 and " + std::to_string(std::numeric_limits<int32_t>::max()));
  if (o.run.keep_last < 1) throw ConfigError(option_ref("keep_last") + " must be at least 1");
  if (o.data.train_more.size() % 2 != 0)
    throw ConfigError(option_ref("train") + " takes two files each time (SRC TGT), got an odd number");
  const size_t corpora = 1 + o.data.train_more.size() / 2;
  if (!o.data.corpus_weights.empty()) {
    if (o.data.corpus_weights.size() != corpora)
      throw ConfigError(option_ref("corpus_weights") + " has " + std::to_string(o.data.corpus_weights.size()) +
                            " weights for " + std::to_string(corpora) + " training corpora",
                        "give one weight per " + option_ref("train") + ", in the same order");
    check_corpus_weights(o.data.corpus_weights);
  }
  const float alpha = o.data.spm_alpha;
  if (!(alpha >= 0 && alpha <= 1))
    throw ConfigError(option_ref("spm_alpha") + " must be between 0 (off) and 1, got " + std::to_string(alpha),
                      "for a unigram model, the inverse temperature over segmentations (start at 0.5: 0.1 makes "
                      "nearly characters of an 8,000-piece model's pieces); for a BPE model, the dropout probability");
  if (o.data.spm_nbest != -1 && o.data.spm_nbest < 2)
    throw ConfigError(option_ref("spm_nbest") + " must be -1 (sample from every segmentation) or at least 2, got " +
                      std::to_string(o.data.spm_nbest) + ", which would not sample");
  if (o.data.spm_nbest != -1 && alpha == 0)
    throw ConfigError(option_ref("spm_nbest") + " needs " + option_ref("spm_alpha") + " (sampling is off without it)");
  check_trainer_options(o.trainer);
  if (model.d_model > 0) LrSchedule(model.d_model, o.trainer.schedule);  // checks the schedule's options
}

void check_vocab_sizes(const VocabSizes& sizes, bool shared, const data::SpmTokenizer& source,
                       const data::SpmTokenizer& target) {
  auto check = [](const std::optional<int>& size, const char* option, const data::SpmTokenizer& spm) {
    if (size && *size != spm.piece_size())
      throw ConfigError(option_ref(option) + " " + std::to_string(*size) + " differs from the " +
                            std::to_string(spm.piece_size()) + " pieces of " + spm.path(),
                        "leave it out: the vocabulary size comes from the SentencePiece model");
  };
  if (shared) {
    check(sizes.shared, "vocab_size", source);
    if (sizes.source || sizes.target)
      throw ConfigError(option_ref("src_vocab_size") + "/" + option_ref("tgt_vocab_size") +
                        " need separate models (" + option_ref("src_spm") + ", " + option_ref("tgt_spm") + ")");
  } else {
    check(sizes.source, "src_vocab_size", source);
    check(sizes.target, "tgt_vocab_size", target);
  }
}

CorpusRun::CorpusRun(const CorpusRunSpec& spec, backend::Backend& backend, dist::Communicator& comm)
    : backend_(backend), comm_(comm), precision_(spec.precision), threads_(spec.threads) {
  set_up_run(spec);
  set_up_vocabulary(spec);
  check_run_config(options_, config_);
  // Before anything is allocated or written: the model, its optimizer state and one batch must fit.
  BatchShape batch{options_.data.batch_tokens, options_.data.filter.max_len + 1, precision_ == "bf16"};
  check_training_fits(config_, batch, backend_.device() == backend::Device::cpu ? nn::physical_memory_bytes() : 0);
  log_path_ = options_.log.empty() ? (fs::path(run_dir_) / "log.jsonl").string() : options_.log;
  if (comm_.is_root()) {
    take_run_dir();
    log_.emplace(log_path_);
    if (log_->dropped_bytes() > 0)
      notes_.push_back(log_path_ + ": dropped a partial last line (" + std::to_string(log_->dropped_bytes()) +
                       " bytes) left by an interrupted run");
  } else {
    log_.emplace();  // discards
  }
  precision_words_ = use_precision(backend_, precision_);
  set_up_data();
  set_up_model();
}

CorpusRun::~CorpusRun() = default;

// Rank 0 makes the run directory its own before it writes there.
void CorpusRun::take_run_dir() {
  if (!lock_) {  // a fresh run: checked before the lock for a quick refusal, and now for certain
    lock_.emplace(run_dir_);
    check_new_run_dir(run_dir_);
  }
  const std::vector<std::string> removed = remove_stale_temporaries(run_dir_);
  if (!removed.empty()) {
    std::string names;
    for (const std::string& path : removed) names += (names.empty() ? "" : ", ") + path;
    notes_.push_back(run_dir_ + ": removed " + std::to_string(removed.size()) +
                     (removed.size() == 1 ? " temporary" : " temporaries") + " left by interrupted runs (" + names +
                     ")");
  }
  check_run_dir_writable(run_dir_);
}

// Where the run stands and its options: the checkpoint's when resuming, else the given ones.
void CorpusRun::set_up_run(const CorpusRunSpec& spec) {
  options_ = spec.options;
  if (spec.resume_dir.empty()) init_dir_ = spec.init_dir;
  source_spm_ = options_.data.source_spm;
  target_spm_ = options_.data.target_spm;
  if (!spec.resume_dir.empty()) {
    run_dir_ = spec.resume_dir;
    if (comm_.is_root()) {
      last_checkpoint(run_dir_);  // a directory without a run gets no lock file
      lock_.emplace(run_dir_);    // before reading: a run writing there would move RUN/last meanwhile
    }
    const ResumePoint point = find_resume_point(run_dir_);
    resume_from_ = point.checkpoint;
    state_ = point.state;
    options_ = merge_for_resume(options_, spec.given_options, point);
    source_spm_ = point.source_spm;  // the checkpoint's copies: the run needs nothing outside it
    target_spm_ = point.target_spm;
    if (spec.model_given) check_same_model(spec.model, point);
    config_ = point.model;
  } else {
    run_dir_ = options_.run.run_dir;
    check_new_run_dir(run_dir_);
    config_ = spec.model;
  }
  options_.run.run_dir = run_dir_;
}

void CorpusRun::set_up_vocabulary(const CorpusRunSpec& spec) {
  src_spm_.emplace(data::SpmTokenizer::load(source_spm_));
  const bool shared = fs::weakly_canonical(source_spm_) == fs::weakly_canonical(target_spm_);
  tgt_spm_.emplace(data::SpmTokenizer::load(target_spm_));
  data::require_tt_special_ids(*src_spm_);
  data::require_tt_special_ids(*tgt_spm_);
  vocab_ = read_run_vocab(source_spm_, target_spm_);
  if (!resume_from_.empty()) return;  // the checkpoint's models and sizes
  if (!init_dir_.empty()) {  // fine-tuning: the weights' vocabulary, exactly
    io::check_vocab_size(*src_spm_, config_.vocab_size_src, "source", init_dir_);
    io::check_vocab_size(*tgt_spm_, config_.vocab_size_tgt, "target", init_dir_);
  }
  check_vocab_sizes(spec.vocab, shared, *src_spm_, *tgt_spm_);
  config_.vocab_size_src = src_spm_->piece_size();
  config_.vocab_size_tgt = tgt_spm_->piece_size();
  config_.shared_vocab = shared;
  config_.validate();
}

void CorpusRun::set_up_data() {
  const DataOptions& d = options_.data;
  corpus_.emplace(data::ParallelCorpus::load(d.train_src, d.train_tgt, *src_spm_, *tgt_spm_, d.filter, threads_));
  const bool sampling = d.spm_alpha > 0;
  std::vector<SampledCorpus> sampled;  // subword sampling: each corpus's files and what its load kept
  if (sampling) sampled.push_back({d.train_src, d.train_tgt, corpus_->line_fates()});
  CorpusMix mix;
  if (!d.train_more.empty() || !d.corpus_weights.empty()) {  // several corpora: one after the other
    auto weight = [&](size_t k) { return d.corpus_weights.empty() ? 1.0 : d.corpus_weights[k]; };
    corpora_ = {{d.train_src, d.train_tgt, corpus_->stats(), weight(0), 0}};
    mix.push_back({0, static_cast<int64_t>(corpus_->size()), weight(0)});
    for (size_t i = 0; i + 1 < d.train_more.size(); i += 2) {
      const data::ParallelCorpus more = data::ParallelCorpus::load(d.train_more[i], d.train_more[i + 1], *src_spm_,
                                                                   *tgt_spm_, d.filter, threads_);
      corpora_.push_back({d.train_more[i], d.train_more[i + 1], more.stats(), weight(corpora_.size()), 0});
      if (sampling) sampled.push_back({d.train_more[i], d.train_more[i + 1], more.line_fates()});
      mix.push_back({static_cast<int64_t>(corpus_->size()), static_cast<int64_t>(more.size()), corpora_.back().weight});
      corpus_->append(more);
    }
    const std::vector<int64_t> drawn = drawn_per_epoch(mix);
    for (size_t k = 0; k < corpora_.size(); ++k) corpora_[k].drawn = drawn[k];
  }
  if (corpus_->size() == 0)
    throw ConfigError("no training pairs left after filtering (" + corpus_line("training", corpus_->stats()) + ")");
  BatcherOptions batching;
  batching.batch_tokens = d.batch_tokens;
  batching.seed = options_.trainer.seed;
  batching.pad_id = config_.pad_id;
  batching.bos_id = config_.bos_id;
  batching.eos_id = config_.eos_id;
  if (sampling) {
    data::SubwordSampling subword;
    subword.alpha = d.spm_alpha;
    subword.nbest = d.spm_nbest;
    subword.seed = options_.trainer.seed;
    sampled_ = std::make_unique<SampledEpochs>(std::move(sampled), *src_spm_, *tgt_spm_, d.filter, subword, threads_);
  }
  batches_ = std::make_unique<CorpusBatches>(*corpus_, batching, std::move(mix), sampled_.get());
  if (d.valid_src.empty() || !comm_.is_root()) return;  // only rank 0 validates
  data::CorpusFilter valid_filter;  // keep what the model can take; only empty pairs go
  valid_filter.max_len = config_.max_positions - 1;
  valid_corpus_.emplace(data::ParallelCorpus::load(d.valid_src, d.valid_tgt, *src_spm_, *tgt_spm_, valid_filter, threads_));
  validator_.emplace(*valid_corpus_, d.batch_tokens, config_);
  if (options_.valid_metric == "bleu")
    validator_->set_bleu(make_bleu_scorer(d.valid_src, util::read_lines(d.valid_tgt), *src_spm_, *tgt_spm_,
                                          ValidBleuOptions{64, threads_}));
}

void CorpusRun::set_up_model() {
  model_ = std::make_unique<nn::Transformer>(config_, backend_);
  trainer_ = std::make_unique<Trainer>(*model_, *batches_, options_.trainer, comm_);
  WeightAverage* average = trainer_->average();
  if (!resume_from_.empty()) {
    load_weights(resume_from_, model_->params(), average ? &average->params() : nullptr);
    load_optimizer(resume_from_, trainer_->optimizer());
    if (trainer_->optimizer().steps() != state_.step)
      throw FormatError(resume_from_ + ": optimizer step " + std::to_string(trainer_->optimizer().steps()) +
                        " and trainer step " + std::to_string(state_.step) + " disagree");
    batches_->seek(state_.position);
  } else {
    if (!init_dir_.empty()) io::load_model_weights(init_dir_, model_->params());  // fine-tuning
    else model_->init_parameters(options_.trainer.seed);
    state_.seed = options_.trainer.seed;
  }
  broadcast_parameters(comm_, model_->params());
  if (average && resume_from_.empty()) average->start(model_->params());
  if (average) broadcast_parameters(comm_, average->params());
  state_.options = to_json(options_);

  start_ = {{"type", "start"}, {"step", state_.step}, {"device", backend_.name()},
            {"precision", precision_}, {"matmul_isa", backend_.matmul_isa()}, {"threads", threads_},
            {"parameters", config_.parameter_count()}, {"model", nn::to_json(config_)},
            {"train", corpus_json(corpus_->stats())}, {"batches_per_epoch", batches_->batches_per_epoch()},
            {"padding", round_to(batches_->batcher().padding_fraction(), 4)}, {"options", state_.options}};
  if (valid_corpus_) start_["valid"] = corpus_json(valid_corpus_->stats());
  for (const Corpus& corpus : corpora_) {
    nlohmann::json c = corpus_json(corpus.stats);
    c["src"] = corpus.src;
    c["tgt"] = corpus.tgt;
    c["weight"] = corpus.weight;
    c["drawn_per_epoch"] = corpus.drawn;
    start_["corpora"].push_back(std::move(c));
  }
  if (!resume_from_.empty()) start_["resumed_from"] = fs::relative(resume_from_, run_dir_).string();
  if (!init_dir_.empty()) start_["init"] = init_dir_;
  if (comm_.size() > 1) start_["ranks"] = comm_.size();
  log_->write(start_);
}

std::vector<std::string> CorpusRun::summary() const {
  std::vector<std::string> lines;
  if (comm_.size() > 1)
    lines.push_back("data parallel over " + std::to_string(comm_.size()) + " ranks (" + comm_.name() + "), " +
                    std::to_string(trainer_->batches_per_step()) + " batches per step");
  lines.push_back(backend_.name() + ", " + std::to_string(threads_) + (threads_ == 1 ? " thread, " : " threads, ") +
                  precision_words_ + ", " + std::to_string(config_.parameter_count()) + " parameters (d_model " +
                  std::to_string(config_.d_model) + ", " + std::to_string(config_.n_layers_enc) + "+" +
                  std::to_string(config_.n_layers_dec) + " layers, vocab " + std::to_string(config_.vocab_size_src) +
                  (config_.shared_vocab ? " shared" : " / " + std::to_string(config_.vocab_size_tgt)) + ")");
  lines.push_back(corpus_line("training", corpus_->stats()));
  for (size_t k = 0; k < corpora_.size(); ++k) {
    char line[160];
    std::snprintf(line, sizeof line, "  corpus %zu: %lld pairs, weight %g, %lld drawn per epoch (", k + 1,
                  static_cast<long long>(corpora_[k].stats.kept), corpora_[k].weight,
                  static_cast<long long>(corpora_[k].drawn));
    lines.push_back(line + corpora_[k].src + ")");
  }
  if (valid_corpus_) lines.push_back(corpus_line("validation", valid_corpus_->stats()));
  // A pair longer than the bound is never dropped: it makes a batch of its own, past the bound.
  const int64_t longer = batches_->batcher().oversize_pairs();
  const std::string oversize =
      longer == 0 ? "" : " (" + std::to_string(longer) + (longer == 1 ? " pair" : " pairs") + " longer, in batches of one)";
  char line[240];
  std::snprintf(line, sizeof line, "%lld batches per epoch of <= %lld tokens a side%s, %.1f%% padding",
                static_cast<long long>(batches_->batches_per_epoch()),
                static_cast<long long>(options_.data.batch_tokens), oversize.c_str(),
                100 * batches_->batcher().padding_fraction());
  lines.push_back(line);
  if (sampled_) {
    const int nbest = options_.data.spm_nbest;
    std::snprintf(line, sizeof line, "subword sampling: alpha %g over %s, each epoch segmented anew (the counts "
                  "above are the best segmentation's)", static_cast<double>(options_.data.spm_alpha),
                  nbest < 0 ? "all segmentations" : ("the " + std::to_string(nbest) + " best").c_str());
    lines.push_back(line);
  }
  if (!resume_from_.empty()) lines.push_back("resuming " + resume_from_ + " at step " + std::to_string(state_.step));
  if (!init_dir_.empty()) lines.push_back("starting from the weights of " + init_dir_ + " (fresh optimizer and schedule)");
  lines.push_back("writing " + run_dir_ + " (log " + log_path_ + ")");
  return lines;
}

RunResult CorpusRun::run(const util::SignalGuard* signals, const RunCallbacks& callbacks) {
  CheckpointContents contents;
  contents.config = &config_;
  contents.params = &model_->params();
  if (trainer_->average()) contents.average = &trainer_->average()->params();
  contents.vocab = vocab_;
  contents.training = state_.options;
  return run_training(*trainer_, state_, validator_ ? &*validator_ : nullptr, contents, options_.run, *log_, signals,
                      callbacks);
}

}  // namespace tt::train
