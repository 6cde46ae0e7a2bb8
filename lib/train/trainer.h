// The training step: K accumulated batches (--accum), the loss scaled by the step's target tokens,
// optional gradient-norm clipping over the flat gradient, Adam (optionally with decoupled weight decay)
// at the scheduled learning rate. Everything that makes a step reproducible is a function of
// (seed, step, batch position), so a checkpoint's step count, Adam state and batch position resume it
// to the bit: dropout masks of micro-batch k of step s use Philox step (s - 1) * accum + k + 1.
#pragma once

#include <cstdint>

#include "nn/transformer.h"
#include "tensor/arena.h"
#include "train/adam.h"
#include "train/batch_source.h"
#include "train/lr_schedule.h"

namespace tt::train {

struct TrainerOptions {
  int accum = 1;           // batches per optimizer step
  double clip_norm = 0;    // clip the global gradient L2 norm to this; 0 = off
  AdamOptions adam;        // paper betas and eps; weight_decay (decoupled) 0
  LrScheduleOptions schedule;
  uint64_t seed = 1;       // dropout masks
};

struct StepStats {
  int64_t step = 0;  // 1-based, after the update
  double loss_sum = 0, nll_sum = 0;
  int64_t tokens = 0;     // target tokens of the step (all accumulated batches)
  int64_t src_tokens = 0;  // non-pad source tokens
  int batches = 0;
  double lr = 0;
  double grad_norm = 0;   // before clipping (computed only when clipping)
  double seconds = 0;     // forward + backward + update, device synchronised (batch fetching excluded)
  double loss() const { return tokens ? loss_sum / static_cast<double>(tokens) : 0.0; }
  double ppl() const;     // exp(nll per token)
};

class Trainer {
 public:
  // Keeps references to the model and the source. Throws tt::ConfigError for impossible options.
  Trainer(nn::Transformer& model, BatchSource& source, const TrainerOptions& options);

  // One optimizer step. A loss or gradient that is not finite stops with a tt::Error naming the step
  // (the parameters are left as they were before the step).
  StepStats step();

  int64_t steps() const { return adam_.steps(); }
  double lr(int64_t step) const { return schedule_.lr(step); }
  Adam& optimizer() { return adam_; }
  const Adam& optimizer() const { return adam_; }
  BatchSource& source() { return source_; }
  nn::Transformer& model() { return model_; }
  const TrainerOptions& options() const { return options_; }

 private:
  nn::Transformer& model_;
  BatchSource& source_;
  TrainerOptions options_;
  LrSchedule schedule_;
  Adam adam_;
  tensor::Arena arena_;
};

}  // namespace tt::train
