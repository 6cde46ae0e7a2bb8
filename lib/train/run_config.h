// Everything a training run is besides the model architecture: data, batching, the recipe, stop
// conditions, validation and checkpoint cadence. Stored flat in every checkpoint's trainer.json
// ("options") and config.json ("training"), keys named like tt-train's flags, so a resumed run can
// take its options from the checkpoint and a user can see how a model was trained.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/parallel_corpus.h"
#include "train/trainer.h"
#include "train/training_run.h"

namespace tt::train {

struct DataOptions {
  std::string train_src, train_tgt;  // absolute paths
  // More training corpora, as SRC TGT pairs (absolute paths, flat: src, tgt, src, tgt, ...).
  std::vector<std::string> train_more;
  // One weight per corpus (the first, then train_more's): each epoch draws pairs from corpus k in
  // proportion to its weight (train/batcher.h); empty: every pair once per epoch.
  std::vector<double> corpus_weights;
  // Subword sampling (data::SubwordSampling): each epoch segments the training text anew with
  // SentencePiece's sampling; alpha 0 is off. Validation and translation use the best segmentation.
  float spm_alpha = 0;
  int spm_nbest = -1;
  std::string valid_src, valid_tgt;  // empty: no validation
  std::string source_spm, target_spm;
  data::CorpusFilter filter;
  int64_t batch_tokens = 4096;
};

struct RunConfig {
  DataOptions data;
  TrainerOptions trainer;
  RunOptions run;      // run_dir is not stored (a run directory may be moved)
  std::string log;     // empty: RUN/log.jsonl
  std::string valid_metric = "bleu";  // bleu (greedy translations) or loss: what run/best and early stopping use
};

nlohmann::json to_json(const RunConfig& config);
// Missing keys keep the defaults; a wrong type is a tt::FormatError naming `file` and the key.
RunConfig run_config_from_json(const nlohmann::json& j, const std::string& file);

}  // namespace tt::train
