#include "train/run_dir.h"

#include <filesystem>

#include "train/checkpoint.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace tt::train {

void check_new_run_dir(const std::string& run_dir) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(fs::path(run_dir) / "last", ec)) || !list_checkpoints(run_dir).empty())
    throw ConfigError(run_dir + " already holds a training run",
                      "continue it with " + option_ref("resume") + " " + run_dir + ", or give " +
                          option_ref("output") + " a new directory");
}

void check_run_dir_writable(const std::string& run_dir) {
  std::error_code ec;
  fs::create_directories(fs::path(run_dir) / "checkpoints", ec);
  if (ec) throw IoError("cannot create the run directory " + run_dir + ": " + ec.message());
  util::AtomicFile probe((fs::path(run_dir) / ".write-test").string());
  probe.stream() << "ok";
  if (!probe.stream().flush()) throw IoError("cannot write into the run directory " + run_dir);
}  // the uncommitted probe is removed

}  // namespace tt::train
