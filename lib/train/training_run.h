// A whole training run around the Trainer: stop conditions (steps, epochs, time, early stopping), periodic
// validation, checkpoints (every N steps, every M minutes, at every validation and at the end; the last K
// kept), the run/last and run/best links, the JSON-lines log, and Ctrl-C / SIGTERM (finish the step, save,
// report the signal). The caller (tt-train) resolves options, writes the "start" record and prints.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "train/checkpoint.h"
#include "train/run_log.h"
#include "train/trainer.h"
#include "train/validator.h"
#include "util/signals.h"

namespace tt::train {

struct RunOptions {
  std::string run_dir;
  int64_t max_steps = 0;       // 0: no limit (likewise below)
  int64_t max_epochs = 0;
  double time_limit_s = 0;     // wall time of this invocation
  int early_stop = 0;          // stop after this many validations without improvement
  int64_t valid_every = 0;     // steps; validation also runs at the end when a validator is given
  int64_t save_every = 0;      // steps
  double save_minutes = 0;
  int keep_last = 5;
  int64_t report_every = 100;  // steps per "train" log record
};

enum class StopReason { max_steps, max_epochs, time_limit, early_stop, signal };
const char* stop_reason_name(StopReason reason);

// What the progress display needs after each step.
struct StepView {
  const StepStats& stats;
  const TrainerState& state;
  double epoch = 0;      // epochs done, fractional
  double tgt_tok_s = 0;  // over the last few seconds, wall clock
  double eta_s = -1;     // to the nearest stop condition; < 0: unknown
};

struct RunCallbacks {
  std::function<void(const StepView&)> on_step;
  std::function<void(const nlohmann::json&)> on_record;  // each log record, as written
};

struct RunResult {
  StopReason reason = StopReason::max_steps;
  int signal = 0;              // SIGINT / SIGTERM when reason == signal
  std::string last_checkpoint;  // relative to the run directory
};

// Data parallel (the trainer's communicator has N > 1 ranks): every rank calls run_training; rank 0
// alone logs, validates and writes checkpoints (the others' `log`, `validator` and `callbacks` are not
// used and they wait for it), and rank 0 decides when to stop (its clock, its validations; a signal on
// any rank stops all), so all ranks take the same number of steps.
// Runs until a stop condition. `state` holds where the run stands (a fresh state or a resumed one; the
// trainer and its source must already be at state.step / state.position) and is kept up to date.
// `checkpoint` gives the model, vocabulary and "training" section of every checkpoint (its adam and state
// pointers are filled in here). `validator` may be null (no validation, no run/best). `signals` may be null.
RunResult run_training(Trainer& trainer, TrainerState& state, const Validator* validator,
                       CheckpointContents checkpoint, const RunOptions& options, RunLog& log,
                       const util::SignalGuard* signals, const RunCallbacks& callbacks);

}  // namespace tt::train
