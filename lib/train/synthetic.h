// Synthetic batches, one batch source among others (train/batch_source.h): the speed benchmark (the same
// shapes and recipe as the PyTorch anchor bench/train_speed.sh runs beside it) and tt-train's smoke run. The
// loop is train/trainer.h.
//   random: every id uniform in [4, V) (the anchor's batches; the loss can only fall to about ln V)
//   copy:   the target repeats the source (a learnable task: the loss visibly falls within a few dozen steps)
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "dist/communicator.h"
#include "nn/batch.h"
#include "nn/config.h"
#include "nn/transformer.h"
#include "train/batch_source.h"

namespace tt::train {

enum class SyntheticTask { random, copy };

// A full (unpadded) batch [B, S] -> [B, T]; tgt_in starts with bos. Deterministic in (seed, step).
// copy needs T <= S. Ids stay below both vocabularies and above the special ids 0-3.
nn::Batch synthetic_batch(const nn::ModelConfig& config, SyntheticTask task, int B, int S, int T, uint64_t seed,
                          int64_t step);

// An endless source of synthetic_batch()es: batch i (0-based position index) is step i + 1's batch.
class SyntheticBatches : public BatchSource {
 public:
  SyntheticBatches(const nn::ModelConfig& config, SyntheticTask task, int B, int S, int T, uint64_t seed)
      : config_(config), task_(task), B_(B), S_(S), T_(T), seed_(seed) {}
  nn::Batch next() override { return synthetic_batch(config_, task_, B_, S_, T_, seed_, ++position_.index); }
  BatchPosition position() const override { return position_; }
  void seek(BatchPosition position) override { position_ = position; }
  int64_t batches_per_epoch() const override { return 0; }

 private:
  nn::ModelConfig config_;
  SyntheticTask task_;
  int B_, S_, T_;
  uint64_t seed_;
  BatchPosition position_;
};

struct SyntheticOptions {
  int64_t steps = 10;
  int batch_size = 64;
  int src_len = 32;
  int tgt_len = 32;
  uint64_t seed = 1;
  int64_t warmup_steps = 4000;  // learning-rate warm-up (paper: 4000)
  double lr_scale = 1.0;
  SyntheticTask task = SyntheticTask::random;
};

struct StepReport {
  int64_t step = 0;  // 1-based
  double loss = 0;   // label-smoothed loss per target token
  double lr = 0;
  double seconds = 0;  // forward + backward + Adam, device synchronised
  double allreduce_seconds = 0;  // of `seconds`, summing over the ranks (data parallel)
};

struct SyntheticResult {
  std::vector<double> losses;
  std::vector<double> step_seconds;
  double median_step_s = 0;  // over the steps after the first 3 (all steps when there are <= 3)
  double tgt_tok_s = 0;      // target tokens per second at the median step time, all ranks together
  double median_allreduce_s = 0;  // all-reduce seconds per step, median over the same steps
};

// Throws tt::ConfigError naming the option (option_ref) for impossible options; call before building a model.
void check_synthetic_options(const nn::ModelConfig& config, const SyntheticOptions& options);

// Trains `model` (parameters already initialised or loaded) for options.steps Adam steps. Throws
// tt::ConfigError for impossible options (check_synthetic_options). `on_step` (may be empty) sees every step.
// With a communicator of N ranks, each step covers N batches of options.batch_size (one per rank).
SyntheticResult train_synthetic(nn::Transformer& model, const SyntheticOptions& options,
                                const std::function<void(const StepReport&)>& on_step,
                                dist::Communicator* comm = nullptr);

}  // namespace tt::train
