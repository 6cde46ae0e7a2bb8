// The run's JSON-lines log (RUN/log.jsonl by default): one object per line, appended and flushed as it
// happens, so `tail -f` and scripts see every record at once and a resumed run continues the same file.
// Record types (schema in man tt-train): start, train, valid, save, end.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace tt::train {

class RunLog {
 public:
  // Opens `path` for appending (creating it). Throws tt::IoError naming it when it cannot be written.
  explicit RunLog(std::string path);
  // A log that discards every record: the ranks other than 0 of a data-parallel run.
  RunLog() = default;
  void write(const nlohmann::json& record);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::ofstream out_;
};

}  // namespace tt::train
