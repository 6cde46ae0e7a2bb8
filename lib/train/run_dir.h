// The run directory of a fresh training run, checked before any work: it must not hold a run already
// (nothing is overwritten; resume that one instead), and it must be writable (a typo in the output path
// must not cost an hour of training that then cannot be saved).
#pragma once

#include <string>

namespace tt::train {

// Throws tt::ConfigError when `run_dir` holds a run (a `last` link or a checkpoint).
void check_new_run_dir(const std::string& run_dir);
// Creates RUN/checkpoints and writes (then removes) a probe file. Throws tt::IoError naming the directory.
void check_run_dir_writable(const std::string& run_dir);

}  // namespace tt::train
