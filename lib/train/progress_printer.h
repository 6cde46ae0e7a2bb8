// What a person watching tt-train sees on stderr: on a terminal one live progress line (epoch, step, loss,
// perplexity, learning rate, target tokens/s, ETA to the stop condition) redrawn at most five times a
// second; otherwise one plain line per "train" log record. Validations, checkpoints and the end are one
// line each either way. Quiet: nothing.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "train/training_run.h"

namespace tt::train {

// "45s", "12m05s", "3h20m".
std::string format_duration(double seconds);

class ProgressPrinter {
 public:
  ProgressPrinter(std::ostream& out, bool quiet, bool live) : out_(out), quiet_(quiet), live_(live && !quiet) {}
  ~ProgressPrinter() { clear(); }
  ProgressPrinter(const ProgressPrinter&) = delete;
  ProgressPrinter& operator=(const ProgressPrinter&) = delete;

  void step(const StepView& view);
  void record(const nlohmann::json& record);

 private:
  void clear();
  std::ostream& out_;
  bool quiet_, live_, shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace tt::train
