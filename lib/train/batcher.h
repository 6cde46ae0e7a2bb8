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

class Batcher {
 public:
  // Keeps a reference to `corpus`. Throws tt::ConfigError for batch_tokens < 1 and tt::Error for an empty
  // corpus.
  Batcher(const data::ParallelCorpus& corpus, const BatcherOptions& options);

  int64_t batches_per_epoch() const { return static_cast<int64_t>(batch_begin_.size()) - 1; }
  // The batch at position(), then advance (after an epoch's last batch: the next epoch, reshuffled).
  nn::Batch next();
  BatchPosition position() const { return position_; }
  // Resume at `position` (as position() returned it); an epoch < 0 or an index outside
  // [0, batches_per_epoch()) throws tt::Error.
  void seek(BatchPosition position);

  // Padded slots / all slots (source + target, target counted once) over one epoch's batches.
  double padding_fraction() const;
  // Pairs that exceed batch_tokens on their own (each is a batch of one).
  int64_t oversize_pairs() const { return oversize_pairs_; }
  const BatcherOptions& options() const { return options_; }

  // Batches in corpus order (pairs 0, 1, 2, ... cut consecutively), without sorting or shuffling, under the
  // same token bound: for validation, where the order maps back to lines. An empty corpus gives none.
  static std::vector<nn::Batch> in_order(const data::ParallelCorpus& corpus, const BatcherOptions& options);

 private:
  void prepare_epoch(int64_t epoch);

  const data::ParallelCorpus& corpus_;
  BatcherOptions options_;
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
