// The exclusive lock on a run directory, RUN/lock, held for a whole training run: two tt-train processes
// on one directory (two `-o RUN` started together, two `--resume RUN`) would write the same checkpoints,
// links and log. flock(): the kernel drops the lock when its holder dies in any way (kill -9 included),
// so a crashed run never leaves a stale lock. The file holds the holder's PID, for the refusal message,
// and is emptied on release; it is never removed (removing a lock file lets a third process lock a new
// one while the second still holds the old).
#pragma once

#include <string>

namespace tt::train {

inline constexpr const char* run_lock_file_name = "lock";

class RunLock {
 public:
  // Creates `run_dir` when needed and locks it. Throws tt::Error naming the directory and the holder's
  // PID when another process holds it, tt::IoError when the directory or its lock cannot be made.
  explicit RunLock(const std::string& run_dir);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

  const std::string& path() const { return path_; }  // RUN/lock

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace tt::train
