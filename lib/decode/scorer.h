// What the search asks of a model: the next-token log-probabilities of every open hypothesis (one row
// each), and moving rows around when hypotheses are kept, copied or dropped. ModelScorer runs one
// nn::Transformer with its KV cache; EnsembleScorer averages several (same target vocabulary). Tests drive
// the search through a hand-written scorer whose best sequence is known. With a vocabulary shortlist
// (shortlist.h) a batch's scores have one column per shortlisted target id (columns()) instead of V.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "decode/shortlist.h"
#include "nn/transformer.h"
#include "tensor/arena.h"

namespace tt::decode {

class StepScorer {
 public:
  virtual ~StepScorer() = default;
  virtual int vocab_size() const = 0;
  // The most target positions (tokens including </s>) one hypothesis may have.
  virtual int max_positions() const = 0;
  // Begins a batch: one row per source (ids ending in eos, none empty), room for max_rows rows and
  // max_steps steps. required: target ids the search may need to score (</s>, prefixes, constraints),
  // which a shortlist must keep.
  virtual void start(const std::vector<std::vector<int32_t>>& sources, int max_rows, int max_steps,
                     const std::vector<int32_t>& required) = 0;
  // The batch's columns: column j of the scores is target id columns()[j] (ascending); null: column j is id j.
  virtual const std::vector<int32_t>* columns() const { return nullptr; }
  // Feeds one token per row; returns the next-token log-probabilities [rows, V] on the scorer's device
  // (valid until the next step or reorder) and, when attention is non-null, writes the step's
  // cross-attention [rows, S] on the host (S = longest source of the batch; last decoder layer, mean over
  // heads). The log-probabilities stay on the device: the search reads back only each row's best few.
  virtual tensor::Tensor step(const std::vector<int32_t>& tokens, std::vector<float>* attention) = 0;
  // true: step() returns the raw logits instead, and the search normalises each row itself, fused with its
  // top-k (ops::log_softmax_topk: the log-probabilities are never written out).
  virtual bool returns_logits() const { return false; }
  // New row i continues old row index[i].
  virtual void reorder(const std::vector<int32_t>& index) = 0;
  // Teacher forcing (a target prefix): feeds row r the tokens forced[r] (bos first; every row as many) as
  // that many step() calls would, and returns what the last of them would. forced_log_probs[r] receives
  // the log-probability of each of row r's tokens after the first, given those before it — the bits
  // step() gives. attention (host): [rows, positions, S]. This default calls step() once per position;
  // ModelScorer feeds them all in one pass.
  virtual tensor::Tensor force(const std::vector<std::vector<int32_t>>& forced,
                               std::vector<std::vector<float>>& forced_log_probs, std::vector<float>* attention);
};

class ModelScorer final : public StepScorer {
 public:
  // logits: step() returns the logits (returns_logits()), else log-probabilities. shortlist: each batch's
  // output layer over its columns only (kept by the caller; null: the whole vocabulary).
  explicit ModelScorer(nn::Transformer& model, bool logits = false, const Shortlist* shortlist = nullptr);
  ~ModelScorer() override;
  ModelScorer(const ModelScorer&) = delete;
  ModelScorer& operator=(const ModelScorer&) = delete;
  int vocab_size() const override { return model_.config().vocab_size_tgt; }
  int max_positions() const override { return model_.config().max_positions; }
  void start(const std::vector<std::vector<int32_t>>& sources, int max_rows, int max_steps,
             const std::vector<int32_t>& required) override;
  const std::vector<int32_t>* columns() const override { return shortlist_ ? &columns_.ids : nullptr; }
  tensor::Tensor step(const std::vector<int32_t>& tokens, std::vector<float>* attention) override;
  void reorder(const std::vector<int32_t>& index) override;
  bool returns_logits() const override { return logits_; }
  // One pass of nn::Transformer::decode_steps (in chunks of positions when the logits would be large).
  tensor::Tensor force(const std::vector<std::vector<int32_t>>& forced,
                       std::vector<std::vector<float>>& forced_log_probs, std::vector<float>* attention) override;

 private:
  // The last decoder layer's cross-attention of `queries` rows, mean over heads, appended to `out` (host).
  void mean_heads(const tensor::Tensor& captured, int queries, std::vector<float>& out) const;
  // Ends the state, and with it the shortlisted output rows: the backend forgets what it packed from them.
  void end_state();
  // The decoder's output for `tokens` (n positions per row): logits, or log-probabilities unless logits_.
  // With a shortlist, the <pad> column (never output) takes the pieces left out: the log of their summed
  // exp(logit), estimated from the sample (Shortlist::Columns), before any normalisation.
  tensor::Tensor decode(const std::vector<int32_t>& tokens, int n, nn::AttentionCapture* capture);

  nn::Transformer& model_;
  bool logits_;
  const Shortlist* shortlist_;
  Shortlist::Columns columns_;
  int32_t rest_column_ = -1;  // <pad>'s column
  std::vector<int64_t> sample_at_;  // decode(): where the sample lies in a step's logits (kept between steps)
  std::vector<int64_t> rest_at_;    // decode(): each row's <pad> column, which gets the left-out pieces' estimate
  std::vector<float> rest_;
  tensor::Arena encode_arena_, cache_arena_, step_arena_;
  std::optional<nn::DecodeState> state_;
  int S_ = 0;
};

// Mean of the members' log-probabilities (and attention); one member's logits as they are. Throws
// tt::ConfigError if the members' target vocabularies or special ids differ.
class EnsembleScorer final : public StepScorer {
 public:
  explicit EnsembleScorer(const std::vector<nn::Transformer*>& models, const Shortlist* shortlist = nullptr);
  int vocab_size() const override { return members_.front()->vocab_size(); }
  int max_positions() const override;
  void start(const std::vector<std::vector<int32_t>>& sources, int max_rows, int max_steps,
             const std::vector<int32_t>& required) override;
  const std::vector<int32_t>* columns() const override { return members_.front()->columns(); }
  tensor::Tensor step(const std::vector<int32_t>& tokens, std::vector<float>* attention) override;
  void reorder(const std::vector<int32_t>& index) override;
  bool returns_logits() const override { return members_.size() == 1; }
  // Each member's one pass; their forced log-probabilities averaged as step() averages them.
  tensor::Tensor force(const std::vector<std::vector<int32_t>>& forced,
                       std::vector<std::vector<float>>& forced_log_probs, std::vector<float>* attention) override;

 private:
  std::vector<std::unique_ptr<ModelScorer>> members_;
  std::vector<float> member_attention_;
};

}  // namespace tt::decode
