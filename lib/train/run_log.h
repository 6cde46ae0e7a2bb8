// The run's JSON-lines log (RUN/log.jsonl by default): one object per line, appended and flushed as it
// happens, so `tail -f` and scripts see every record at once and a resumed run continues the same file.
// Record types (schema in man tt-train): start, train, valid, save, end.
#pragma once

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace tt::train {

class RunLog {
 public:
  // Opens `path` for appending (creating it), first cutting off a partial last line (drop_partial_last_line).
  // Throws tt::IoError naming it when it cannot be written.
  explicit RunLog(std::string path);
  // A log that discards every record: the ranks other than 0 of a data-parallel run.
  RunLog() = default;
  void write(const nlohmann::json& record);
  const std::string& path() const { return path_; }
  // Bytes of a partial last line cut off on opening (0: none).
  int64_t dropped_bytes() const { return dropped_bytes_; }

 private:
  std::string path_;
  std::ofstream out_;
  int64_t dropped_bytes_ = 0;
};

// A run killed while writing a record (kill -9, a full disk, a power cut) leaves a last line without its
// '\n'; appended to, it would glue the next record onto it, and the line would be no JSON for anyone that
// reads the log (tt-average --best, jq). Truncates `path` after its last '\n' (to nothing when it has
// none) and returns the bytes dropped: 0 when it ends in '\n', is empty or does not exist. tt::IoError
// naming it when it cannot be read or truncated.
int64_t drop_partial_last_line(const std::string& path);

}  // namespace tt::train
