// Resuming a training run: where it stands (its last checkpoint) and which of its options a resumed run
// keeps. Options that shape the training trajectory (data, batching, the recipe, the seed) must stay as
// they were, or the resumed run would not continue to the bit; the others (stop conditions, validation,
// checkpoint cadence, the log) a user may change. Options are named by field (util/error.h option_ref):
// tt-train names them by its flags.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nn/config.h"
#include "train/checkpoint.h"
#include "train/run_config.h"

namespace tt::train {

// One option of a run as a user sets it (tt-train has a flag for each), the RunConfig keys it sets, and
// whether a resumed run must keep it.
struct RunOption {
  std::string name;               // "train", "max_len", "lr", ... (a field: --train, --max-len, --lr)
  std::vector<std::string> keys;  // "train_src", "train_tgt"
  bool trajectory = false;        // shapes the trajectory: a resumed run must keep it
};
const std::vector<RunOption>& run_options();

// What a resumed run starts from.
struct ResumePoint {
  std::string checkpoint;       // RUN/checkpoints/step-NNNNNN, where RUN/last points
  nn::ModelConfig model;        // its config.json
  nlohmann::json config_json;   // the whole config.json
  TrainerState state;           // its trainer.json
  std::string source_spm, target_spm;  // the checkpoint's copies: the run needs nothing outside it
};
// Throws tt::IoError when `run_dir` has no usable checkpoint, FormatError naming a corrupt file.
ResumePoint find_resume_point(const std::string& run_dir);

// The resumed run's options: the checkpoint's (`point.state.options`), with the options named in `given`
// (run_options() names the user set) taken from `now` where a resumed run may change them. A trajectory
// option whose value differs from the checkpoint's is a tt::ConfigError naming the option, both values
// and the file, before anything is written.
RunConfig merge_for_resume(const RunConfig& now, const std::vector<std::string>& given, const ResumePoint& point);

// "d_model: 64 vs 32, heads: 4 vs 2": every field where the two configs differ ("" when none).
std::string config_diff(const nn::ModelConfig& a, const nn::ModelConfig& b);
// Model options given for a resumed run must describe the run's model (vocabulary sizes come from the
// run's SentencePiece models, so they are not compared). Throws tt::ConfigError listing the differences.
void check_same_model(nn::ModelConfig given, const ResumePoint& point);

}  // namespace tt::train
