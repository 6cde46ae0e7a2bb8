#include "util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "util/atomic_dir.h"
#include "util/error.h"
#include "util/file_kind.h"

namespace fs = std::filesystem;

namespace tt::util {

std::string temp_path_beside(const std::string& path) {
  static std::atomic<unsigned> counter{0};  // uniqueness within a process; pid covers the rest
  return path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
}

std::string follow_symlinks(const std::string& path) {
  fs::path p = path;
  for (int links = 0;; ++links) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p.string();
    if (links == 40) throw IoError(path + ": too many levels of symbolic links");
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) throw IoError(path + ": cannot read the symbolic link: " + ec.message());
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
}

void commit_file(const std::string& from, const std::string& to) {
  fsync_path(from);
  if (std::rename(from.c_str(), to.c_str()) != 0)
    throw IoError("cannot rename " + from + " to " + to + ": " + std::strerror(errno));
}

AtomicFile::AtomicFile(std::string path, bool binary) : path_(std::move(path)), target_(follow_symlinks(path_)) {
  std::error_code ec;
  if (fs::is_directory(target_, ec)) throw IoError(path_ + ": is a directory", "give a file name");
  through_ = is_special_file(target_);
  temp_path_ = through_ ? target_ : temp_path_beside(target_);
  out_.open(temp_path_, binary ? std::ios::binary | std::ios::out : std::ios::out);
  if (!out_)
    throw IoError(path_ + ": cannot write (" + std::strerror(errno) + ")",
                  "check that the directory exists and is writable");
}

AtomicFile::~AtomicFile() {
  if (!committed_ && !through_) {
    out_.close();
    std::remove(temp_path_.c_str());
  }
}

void AtomicFile::commit() {
  if (out_) {  // else a write already failed, and errno still says why
    errno = 0;
    out_.flush();
  }
  if (!out_)
    throw IoError(path_ + ": write failed (" +
                  std::string(errno ? std::strerror(errno) : through_ ? "the device or pipe took no more" : "disk full?") + ")");
  out_.close();
  if (out_.fail()) throw IoError(path_ + ": write failed (" + std::string(errno ? std::strerror(errno) : "I/O error") + ")");
  if (!through_) commit_file(temp_path_, target_);
  committed_ = true;
}

}  // namespace tt::util
