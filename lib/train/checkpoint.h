// A training run's directory:
//   RUN/checkpoints/step-NNNNNN/   config.json ("model", "vocab", "training"), model.safetensors, the
//                                  SentencePiece model(s), optimizer.safetensors (Adam m, v: flat; step),
//                                  trainer.json (TrainerState); with --ema-decay, model.safetensors is the
//                                  weights' moving average and training_weights.safetensors the weights
//   RUN/last, RUN/best             symlinks to checkpoints/step-NNNNNN (replaced atomically)
//   RUN/log.jsonl                  (train/run_log.h)
// Each checkpoint is written all-or-nothing (util::AtomicDirectory): a crash or a second Ctrl-C at any
// instant leaves every earlier checkpoint and link intact. A checkpoint is a complete model directory.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nn/config.h"
#include "nn/params.h"
#include "train/adam.h"
#include "train/batcher.h"
#include "train/run_vocab.h"

namespace tt::train {

inline constexpr const char* optimizer_file_name = "optimizer.safetensors";
inline constexpr const char* trainer_state_file_name = "trainer.json";
// With --ema-decay: the weights the optimizer trains (model.safetensors holds their moving average).
inline constexpr const char* training_weights_file_name = "training_weights.safetensors";

// trainer.json: where the run stands.
struct TrainerState {
  int64_t step = 0;            // optimizer steps done
  BatchPosition position;      // the next batch
  double elapsed_s = 0;        // training wall time over all sessions
  uint64_t seed = 1;
  std::optional<double> best_metric;  // the best validation metric so far (see best_metric_name)
  std::string best_metric_name;       // "bleu" (higher is better) or "loss" (lower is better)
  int64_t best_step = 0;
  int bad_validations = 0;     // validations since the best one (early stopping)
  nlohmann::json options = nlohmann::json::object();  // the run's options, as the tool needs them to resume
};

nlohmann::json to_json(const TrainerState& state);
// Errors name `file` and the key.
TrainerState trainer_state_from_json(const nlohmann::json& j, const std::string& file);

// "step-000120" and "checkpoints/step-000120" (six digits, more when the step needs them).
std::string checkpoint_name(int64_t step);
std::string checkpoint_path(int64_t step);

struct CheckpointContents {
  const nn::ModelConfig* config = nullptr;
  const nn::ParameterSet* params = nullptr;
  // The weights' moving average (--ema-decay), or null. When given, model.safetensors holds it and the
  // weights go to training_weights.safetensors.
  const nn::ParameterSet* average = nullptr;
  const Adam* adam = nullptr;
  const TrainerState* state = nullptr;
  RunVocab vocab;  // written in (empty: no vocabulary, ids-only runs)
  nlohmann::json training = nlohmann::json::object();  // config.json "training"
};

// Writes RUN/checkpoints/step-NNNNNN (state->step) all-or-nothing, replacing one of the same step.
// Returns its path relative to RUN. Throws tt::IoError naming what it could not write.
std::string write_checkpoint(const std::string& run_dir, const CheckpointContents& contents);

// Points RUN/<name> at `target` (relative to RUN) by making the link under a temporary name and renaming
// it over the old one, so the link is never missing or half-made.
void set_link(const std::string& run_dir, const std::string& name, const std::string& target);

// The checkpoint directories of RUN by step, ascending (temporary and foreign entries ignored).
std::vector<std::pair<int64_t, std::string>> list_checkpoints(const std::string& run_dir);
// Deletes all but the newest `keep_last` checkpoints, never the one RUN/best or RUN/last points to.
void prune_checkpoints(const std::string& run_dir, int keep_last);

// The checkpoint directory RUN/last points to. Throws tt::IoError when RUN has no usable checkpoint; when
// RUN/last is missing or points to a checkpoint that is gone, the hint names the newest intact one.
std::string last_checkpoint(const std::string& run_dir);
// RUN/checkpoints/step-NNNNNN of the highest step whose files are all there; "" when there is none.
std::string newest_intact_checkpoint(const std::string& run_dir);
TrainerState load_trainer_state(const std::string& checkpoint_dir);
// The trained weights and, when `average` is given, their moving average, from a checkpoint (a checkpoint
// written without an average gives the weights to both).
void load_weights(const std::string& checkpoint_dir, const nn::ParameterSet& weights, const nn::ParameterSet* average);
// Restores Adam's moments and step from checkpoint_dir/optimizer.safetensors (FormatError naming the file
// on a size mismatch).
void load_optimizer(const std::string& checkpoint_dir, Adam& adam);

}  // namespace tt::train
