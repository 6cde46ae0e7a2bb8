#include "util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "util/atomic_dir.h"
#include "util/error.h"

namespace tt::util {

std::string temp_path_beside(const std::string& path) {
  static std::atomic<unsigned> counter{0};  // uniqueness within a process; pid covers the rest
  return path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
}

void commit_file(const std::string& from, const std::string& to) {
  fsync_path(from);
  if (std::rename(from.c_str(), to.c_str()) != 0)
    throw IoError("cannot rename " + from + " to " + to + ": " + std::strerror(errno));
}

AtomicFile::AtomicFile(std::string path, bool binary)
    : path_(std::move(path)), temp_path_(temp_path_beside(path_)) {
  out_.open(temp_path_, binary ? std::ios::binary | std::ios::out : std::ios::out);
  if (!out_)
    throw IoError(path_ + ": cannot write (" + std::strerror(errno) + ")",
                  "check that the directory exists and is writable");
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.close();
    std::remove(temp_path_.c_str());
  }
}

void AtomicFile::commit() {
  out_.flush();
  if (!out_) throw IoError(path_ + ": write failed (disk full?)");
  out_.close();
  commit_file(temp_path_, path_);
  committed_ = true;
}

}  // namespace tt::util
