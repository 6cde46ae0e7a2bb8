// A training run on a parallel corpus, set up from its resolved options: a fresh run into
// options.run.run_dir, or the run in resume_dir continued from its last checkpoint (train/resume.h).
// Everything is checked before anything is written: the run directory, the SentencePiece models and
// the vocabulary sizes, the length limits, whether the model and one batch fit in memory, and that the
// run directory can be written. The run directory is locked for the run's lifetime (train/run_lock.h):
// resuming, before the checkpoint is read; a fresh run, once the checks pass, and then checked again for
// a run that another process may have put there meanwhile. Holding the lock, the run tidies what killed
// runs left (train/stale_temporaries.h, a partial last log line). Then the corpora are read and
// tokenised, the model is built (initialised or loaded with its optimizer state and data position) and
// the "start" record goes to the log.
// Data parallel: every rank reads the data (and, resuming, the checkpoint) itself; rank 0 alone locks
// and writes.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "data/parallel_corpus.h"
#include "data/spm_tokenizer.h"
#include "dist/communicator.h"
#include "nn/config.h"
#include "nn/transformer.h"
#include "train/batch_source.h"
#include "train/run_config.h"
#include "train/run_lock.h"
#include "train/run_log.h"
#include "train/run_vocab.h"
#include "train/sampled_epochs.h"
#include "train/trainer.h"
#include "train/training_run.h"
#include "train/validator.h"

namespace tt::train {

// Vocabulary sizes the user asked for (options vocab_size, src_vocab_size, tgt_vocab_size): they must
// match the SentencePiece models, where the sizes come from.
struct VocabSizes {
  std::optional<int> shared, source, target;
};

struct CorpusRunSpec {
  RunConfig options;              // paths absolute; run.run_dir for a fresh run
  nn::ModelConfig model;          // a fresh run's architecture (the vocabulary sizes are set from the models)
  std::string resume_dir;         // non-empty: resume this run
  // A fresh run that starts from this model directory's weights (fine-tuning; `model` is its config,
  // the SentencePiece models must be its own): a fresh optimizer and schedule.
  std::string init_dir;
  bool model_given = false;       // resuming with model options: they must describe the run's model
  std::vector<std::string> given_options;  // run_options() names the user set (resuming)
  VocabSizes vocab;
  std::string precision = "fp32";  // train/precision.h
  int threads = 1;                 // tokenising and BLEU threads
};

class CorpusRun {
 public:
  // Option errors name options by field (util/error.h option_ref).
  CorpusRun(const CorpusRunSpec& spec, backend::Backend& backend, dist::Communicator& comm);
  ~CorpusRun();
  CorpusRun(const CorpusRun&) = delete;
  CorpusRun& operator=(const CorpusRun&) = delete;

  // Trains until a stop condition (train/training_run.h).
  RunResult run(const util::SignalGuard* signals, const RunCallbacks& callbacks);

  const nlohmann::json& start_record() const { return start_; }
  // What the run is, for people: device, model, corpora, batches, where it writes.
  std::vector<std::string> summary() const;
  // What the run repaired in its directory before starting (what killed runs left), for people.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  void set_up_run(const CorpusRunSpec& spec);
  void set_up_vocabulary(const CorpusRunSpec& spec);
  void set_up_data();
  void set_up_model();
  void take_run_dir();

  backend::Backend& backend_;
  dist::Communicator& comm_;
  std::optional<RunLock> lock_;  // rank 0; released last
  std::string precision_, precision_words_;
  int threads_ = 1;
  RunConfig options_;
  nn::ModelConfig config_;
  TrainerState state_;
  std::string run_dir_, resume_from_, log_path_, source_spm_, target_spm_;
  std::string init_dir_;  // fine-tuning from these weights (a fresh run only)
  std::optional<data::SpmTokenizer> src_spm_, tgt_spm_;
  RunVocab vocab_;  // what every checkpoint carries, read once
  std::optional<RunLog> log_;
  std::optional<data::ParallelCorpus> corpus_, valid_corpus_;
  // Several training corpora (tt-train --train A --train B), for the log and the summary: each one's
  // files, statistics, weight and pairs drawn per epoch (train/batcher.h); empty for one corpus without
  // weights.
  struct Corpus {
    std::string src, tgt;
    data::CorpusStats stats;
    double weight = 1;
    int64_t drawn = 0;
  };
  std::vector<Corpus> corpora_;
  std::unique_ptr<SampledEpochs> sampled_;  // subword sampling: each epoch's corpus (before batches_, which reads it)
  std::unique_ptr<CorpusBatches> batches_;
  std::optional<Validator> validator_;
  std::unique_ptr<nn::Transformer> model_;
  std::unique_ptr<Trainer> trainer_;
  nlohmann::json start_;
  std::vector<std::string> notes_;
};

// The run's options on their own and against the model: max_len within the model's positions, the batch
// size, keep_last at least 1, the recipe (trainer options, learning-rate schedule). Reads nothing: a
// tool may call it first and treat a refusal as a usage error. Throws tt::ConfigError naming the option
// (option_ref).
void check_run_config(const RunConfig& options, const nn::ModelConfig& model);
// Requested vocabulary sizes against the SentencePiece models' pieces (tt::ConfigError naming the option).
void check_vocab_sizes(const VocabSizes& sizes, bool shared, const data::SpmTokenizer& source,
                       const data::SpmTokenizer& target);

}  // namespace tt::train
