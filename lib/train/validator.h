// Validation: the label-smoothed loss and perplexity of a held-out corpus (teacher-forced, no dropout,
// batched in corpus order), and optionally the BLEU of its greedy translations (train/valid_bleu.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "data/parallel_corpus.h"
#include "nn/batch.h"
#include "nn/transformer.h"

namespace tt::train {

struct ValidationResult {
  double loss = 0;  // label-smoothed cross-entropy per target token (as the training loss)
  double nll = 0;   // plain -log p per target token
  double ppl = 0;   // exp(nll)
  int64_t tokens = 0;
  std::optional<double> bleu;  // when a BLEU scorer is set
};

// Scores the model's translations of the validation set (BLEU, 0-100).
using BleuScorer = std::function<double(nn::Transformer& model)>;

class Validator {
 public:
  // Cuts `corpus` (kept alive by the caller) into in-order batches of at most batch_tokens tokens a side.
  Validator(const data::ParallelCorpus& corpus, int64_t batch_tokens, const nn::ModelConfig& config);
  void set_bleu(BleuScorer scorer) { bleu_ = std::move(scorer); }
  bool has_bleu() const { return static_cast<bool>(bleu_); }
  size_t pairs() const { return pairs_; }

  ValidationResult run(nn::Transformer& model) const;

 private:
  std::vector<nn::Batch> batches_;
  size_t pairs_ = 0;
  BleuScorer bleu_;
};

}  // namespace tt::train
