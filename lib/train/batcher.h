// Token batching for training: pairs sorted by length and cut into batches whose padded source AND
// padded target token counts stay within `batch_tokens`; batch order reshuffled every epoch.
//
// The plan. Pairs are sorted by (target length, source length, index) and consecutive runs are cut so that
// B * S <= batch_tokens and B * T <= batch_tokens, where S is the longest stored source (incl. eos) and
// T the longest target + 1 (bos / eos) in the batch. A pair bigger than the bound alone is a batch of one
// (counted in oversize_pairs(), never dropped). Batch shapes are fixed for the whole run.
// Each epoch, from Philox under `seed` (so a pure function of (seed, epoch), whatever the thread count):
//   - pairs with identical (source, target) lengths trade places across the plan (stream site 1), so the
//     same pairs do not always meet, while every batch keeps its shape, its token bound and its padding;
//   - the batch order is a random permutation (rng_stream(shuffle, epoch, 0)).
// Every pair appears exactly once per epoch.
//
// Several corpora, weighted (a CorpusMix; tt-train --train A --train B --corpus-weights): the corpus is
// their concatenation, and each epoch draws round(N * w_k / W) pairs from corpus k (N: all pairs, W: the
// weights' sum): whole passes over it, then a random choice of the rest without repeats (stream site
// 2 + k). The drawn pairs are planned as above, anew each epoch, so batches_per_epoch() may change from
// one epoch to the next; all of it a pure function of (seed, epoch).
//
// Subword sampling (EpochCorpora; tt-train --spm-alpha): each epoch's pairs are the same, segmented anew,
// so their lengths change; every epoch is planned on its own corpus, as a mix is.
#pragma once

#include <cstdint>
#include <vector>

#include "data/parallel_corpus.h"
#include "nn/batch.h"

namespace tt::train {

struct BatcherOptions {
  int64_t batch_tokens = 4096;
  uint64_t seed = 1;
  int32_t pad_id = 0, bos_id = 2, eos_id = 3;
};

struct BatchPosition {
  int64_t epoch = 0;  // 0-based
  int64_t index = 0;  // batches already taken in this epoch
  bool operator==(const BatchPosition&) const = default;
};

// One corpus of a mix: pairs [begin, begin + size) of the concatenation, drawn in proportion to weight.
struct CorpusShare {
  int64_t begin = 0, size = 0;
  double weight = 1;
};
using CorpusMix = std::vector<CorpusShare>;

// tt::ConfigError naming corpus_weights unless every weight is a number >= 0 and one is above 0.
void check_corpus_weights(const std::vector<double>& weights);
// The pairs corpus k gives each epoch: round(total * w_k / sum of the weights) (weights checked).
std::vector<int64_t> drawn_per_epoch(const CorpusMix& mix);

// Each epoch's corpus when the segmentation is sampled anew every epoch (train/sampled_epochs.h): the same
// pairs in the same order, other lengths.
class EpochCorpora {
 public:
  virtual ~EpochCorpora() = default;
  // Epoch `epoch`'s corpus, valid until the next call.
  virtual const data::ParallelCorpus& at(int64_t epoch) = 0;
};

class Batcher {
 public:
  // Keeps a reference to `corpus`. Throws tt::ConfigError for batch_tokens < 1 and tt::Error for an empty
  // corpus. mix: empty, or the corpora `corpus` concatenates, in order (tt::ConfigError for a weight
  // that is negative, not finite, or a mix that draws nothing). epochs: when set, each epoch's batches
  // come from epochs->at(epoch), whose pairs must be `corpus`'s (then `corpus`, the best segmentation,
  // only gives the statistics below).
  Batcher(const data::ParallelCorpus& corpus, const BatcherOptions& options, CorpusMix mix = {},
          EpochCorpora* epochs = nullptr);

  // This epoch's (the position's) batches; with sampled segmentations, before the first next() or seek(),
  // those of `corpus`.
  int64_t batches_per_epoch() const { return static_cast<int64_t>(batch_begin_.size()) - 1; }
  // The batch at position(), then advance (after an epoch's last batch: the next epoch, reshuffled).
  nn::Batch next();
  BatchPosition position() const { return position_; }
  // Resume at `position` (as position() returned it); an epoch < 0 or an index outside
  // [0, batches_per_epoch()) of that epoch throws tt::Error.
  void seek(BatchPosition position);

  // Padded slots / all slots (source + target, target counted once) over one epoch's batches (a mix:
  // the first epoch's; sampled segmentations: those of `corpus`).
  double padding_fraction() const;
  // Pairs that exceed batch_tokens on their own (each is a batch of one).
  int64_t oversize_pairs() const { return oversize_pairs_; }
  const BatcherOptions& options() const { return options_; }

  // Batches in corpus order (pairs 0, 1, 2, ... cut consecutively), without sorting or shuffling, under the
  // same token bound: for validation, where the order maps back to lines. An empty corpus gives none.
  static std::vector<nn::Batch> in_order(const data::ParallelCorpus& corpus, const BatcherOptions& options);

 private:
  bool plans_each_epoch() const { return !mix_.empty() || epochs_ != nullptr; }
  std::vector<int64_t> pairs_of(int64_t epoch) const;  // the epoch's pairs, before planning
  void prepare_epoch(int64_t epoch);
  // sorted_, batch_begin_ and group_begin_ for these pairs (indices into the corpus, repeats allowed);
  // returns the pairs over the bound on their own.
  int64_t plan(std::vector<int64_t> pairs);
  std::vector<int64_t> draw(int64_t epoch) const;  // a mix's pairs of one epoch

  const data::ParallelCorpus* corpus_;  // this epoch's
  BatcherOptions options_;
  CorpusMix mix_;
  EpochCorpora* epochs_;
  std::vector<int64_t> sorted_;       // pair indices by (target length, source length, index)
  std::vector<int64_t> batch_begin_;  // batch b is plan positions [batch_begin_[b], batch_begin_[b + 1])
  std::vector<int64_t> group_begin_;  // runs of `sorted_` with identical (source, target) lengths
  int64_t oversize_pairs_ = 0;
  int64_t padded_slots_ = 0, all_slots_ = 0;

  BatchPosition position_;
  int64_t prepared_epoch_ = -1;
  std::vector<int64_t> plan_;         // this epoch's pair per plan position (sorted_, equal-length groups shuffled)
  std::vector<int64_t> batch_order_;  // this epoch's batch permutation
};

}  // namespace tt::train
