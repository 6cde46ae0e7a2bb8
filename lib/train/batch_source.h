// Where the trainer's batches come from: a real corpus (the token Batcher) or synthetic data. A source has a
// position that a checkpoint stores and a resumed run seeks to, so a run continues on the very next batch.
#pragma once

#include <cstdint>

#include "nn/batch.h"
#include "train/batcher.h"

namespace tt::train {

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  // The batch at position(), then advance.
  virtual nn::Batch next() = 0;
  virtual BatchPosition position() const = 0;
  virtual void seek(BatchPosition position) = 0;
  // Batches per epoch; 0 for an endless source (synthetic data has no epochs).
  virtual int64_t batches_per_epoch() const = 0;
};

// The token-batched corpus (train/batcher.h): epochs, per-epoch shuffle, seek.
class CorpusBatches : public BatchSource {
 public:
  CorpusBatches(const data::ParallelCorpus& corpus, const BatcherOptions& options, CorpusMix mix = {},
                EpochCorpora* epochs = nullptr)
      : batcher_(corpus, options, std::move(mix), epochs) {}
  nn::Batch next() override { return batcher_.next(); }
  BatchPosition position() const override { return batcher_.position(); }
  void seek(BatchPosition position) override { batcher_.seek(position); }
  int64_t batches_per_epoch() const override { return batcher_.batches_per_epoch(); }
  const Batcher& batcher() const { return batcher_; }

 private:
  Batcher batcher_;
};

}  // namespace tt::train
