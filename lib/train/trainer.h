// The training step: K accumulated batches (--accum), the loss scaled by the step's target tokens,
// optional gradient-norm clipping over the flat gradient, Adam (optionally with decoupled weight decay)
// at the scheduled learning rate. Everything that makes a step reproducible is a function of
// (seed, step, batch position), so a checkpoint's step count, Adam state and batch position resume it
// to the bit: dropout masks of batch g of step s use the Philox stream of (seed, s, g).
//
// Data parallel (dist::Communicator with N ranks): a step covers N * accum batches, taken from the source
// in the same order on every rank; rank r trains batches g = r, r + N, r + 2N, ... of them. Gradients (the
// flat buffer, in buckets), token counts and losses are summed over the ranks before clipping and Adam, so
// every rank applies the same update, and the step is the one a single process with N * accum batches
// per step makes (up to the order of fp32 sums).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "dist/communicator.h"
#include "nn/transformer.h"
#include "tensor/arena.h"
#include "train/adam.h"
#include "train/batch_source.h"
#include "train/lr_schedule.h"
#include "train/weight_average.h"

namespace tt::train {

struct TrainerOptions {
  int accum = 1;           // batches per optimizer step
  double clip_norm = 0;    // clip the global gradient L2 norm to this; 0 = off
  AdamOptions adam;        // paper betas and eps; weight_decay (decoupled) 0
  LrScheduleOptions schedule;
  uint64_t seed = 1;       // dropout masks
  double ema_decay = 0;    // a moving average of the weights (train/weight_average.h); 0 = off
  int64_t bucket_floats = int64_t{1} << 22;  // gradient all-reduce bucket (16 MiB of fp32)
};

// Throws tt::ConfigError naming the option (option_ref) that is out of range (the Trainer checks them too).
void check_trainer_options(const TrainerOptions& options);

struct StepStats {
  int64_t step = 0;  // 1-based, after the update
  double loss_sum = 0, nll_sum = 0;
  int64_t tokens = 0;     // target tokens of the step (all accumulated batches)
  int64_t src_tokens = 0;  // non-pad source tokens
  int batches = 0;        // over all ranks
  double lr = 0;
  double grad_norm = 0;   // before clipping (computed only when clipping)
  double seconds = 0;     // forward + backward + update, device synchronised (batch fetching excluded)
  double allreduce_seconds = 0;  // of `seconds`: summing gradients, tokens and losses over the ranks
  double loss() const { return tokens ? loss_sum / static_cast<double>(tokens) : 0.0; }
  double ppl() const;     // exp(nll per token)
};

class Trainer {
 public:
  // Keeps references to the model and the source. Throws tt::ConfigError for impossible options.
  // Single process.
  Trainer(nn::Transformer& model, BatchSource& source, const TrainerOptions& options);
  // One rank of a data-parallel run (keeps a reference to `comm`). Every rank must start from the same
  // parameters, optimizer state and source position. A multi-rank communicator that cannot take device
  // memory on a device backend is a tt::ConfigError.
  Trainer(nn::Transformer& model, BatchSource& source, const TrainerOptions& options, dist::Communicator& comm);

  // One optimizer step. A loss or gradient that is not finite stops with a tt::Error naming the step
  // (the parameters are left as they were before the step). Between steps, nothing else may change the
  // weights (the average's swap puts them back exactly): in bf16 the optimizer wrote the next step's copy.
  StepStats step();

  int64_t steps() const { return adam_.steps(); }
  double lr(int64_t step) const { return schedule_.lr(step); }
  Adam& optimizer() { return adam_; }
  const Adam& optimizer() const { return adam_; }
  // The moving average of the weights (--ema-decay), or null. Its start() is the caller's, once the
  // weights are set.
  WeightAverage* average() { return average_ ? &*average_ : nullptr; }
  BatchSource& source() { return source_; }
  nn::Transformer& model() { return model_; }
  const TrainerOptions& options() const { return options_; }
  dist::Communicator& communicator() { return comm_; }
  // Batches one step takes from the source: ranks * accum.
  int64_t batches_per_step() const { return static_cast<int64_t>(comm_.size()) * options_.accum; }

 private:
  // The public constructors': `comm`, or (null) the LocalCommunicator `own_comm`, which the trainer keeps.
  Trainer(nn::Transformer& model, BatchSource& source, const TrainerOptions& options,
          std::unique_ptr<dist::Communicator> own_comm, dist::Communicator* comm);
  void all_reduce_grads();

  std::unique_ptr<dist::Communicator> own_comm_;  // the single-process constructor's LocalCommunicator
  dist::Communicator& comm_;
  nn::Transformer& model_;
  BatchSource& source_;
  TrainerOptions options_;
  LrSchedule schedule_;
  Adam adam_;
  std::optional<WeightAverage> average_;
  tensor::Arena arena_;
  bool bf16_copy_written_ = false;  // the last step's optimizer wrote the weights' bf16 copy
};

// Data parallel: every rank starts from rank 0's parameters (initialisation is deterministic and a loaded
// file is the same file, but one broadcast makes it certain). A no-op on one rank.
void broadcast_parameters(dist::Communicator& comm, nn::ParameterSet& params);

}  // namespace tt::train
