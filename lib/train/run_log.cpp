#include "train/run_log.h"

#include <cerrno>
#include <cstring>

#include "util/error.h"

namespace tt::train {

RunLog::RunLog(std::string path) : path_(std::move(path)) {
  out_.open(path_, std::ios::app);
  if (!out_) throw IoError("cannot write the log " + path_ + " (" + std::strerror(errno) + ")",
                           "check that its directory exists and is writable");
}

void RunLog::write(const nlohmann::json& record) {
  if (path_.empty()) return;
  out_ << record.dump() << '\n';
  out_.flush();
  if (!out_) throw IoError("cannot write the log " + path_ + " (disk full?)");
}

}  // namespace tt::train
