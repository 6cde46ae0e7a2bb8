// A training run's log.jsonl as tt-average --best reads it (checkpoints step-000100 ... step-000400 exist).
// The answer is at most the asked-for number of existing checkpoints in ascending step, or a tt::Error;
// never a crash or another exception.
#include <cstdint>
#include <filesystem>

#include "fuzz_support.h"
#include "io/checkpoint_selection.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string run = [] {
    const std::string r = "/tmp/tt-fuzz-run-" + std::to_string(::getpid());
    for (const char* step : {"000100", "000200", "000300", "000400"})
      std::filesystem::create_directories(r + "/checkpoints/step-" + step);
    return r;
  }();
  const std::string& log = tt::fuzz::input_file(data, size);
  try {
    const tt::io::CheckpointSelection s = tt::io::select_best_checkpoints(run, 3, log);
    if (s.checkpoints.empty() || s.checkpoints.size() > 3) __builtin_trap();
    for (size_t i = 0; i < s.checkpoints.size(); ++i) {
      if (!std::filesystem::is_directory(s.checkpoints[i].dir)) __builtin_trap();
      if (i > 0 && s.checkpoints[i].step <= s.checkpoints[i - 1].step) __builtin_trap();
    }
  } catch (const tt::Error&) {
  }
  return 0;
}
