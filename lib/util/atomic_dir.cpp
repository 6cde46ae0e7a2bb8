#include "util/atomic_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace tt::util {

void fsync_path(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw IoError(path + ": cannot open for sync: " + std::strerror(errno));
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw IoError(path + ": fsync failed: " + std::strerror(errno));
}

AtomicDirectory::AtomicDirectory(std::string target) : target_(std::move(target)) {
  while (target_.size() > 1 && target_.back() == '/') target_.pop_back();
  const std::string named = target_;
  target_ = follow_symlinks(target_);  // a link to a directory stays a link; the directory is replaced
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(target_, ec);  // (ec: a missing target is fine)
  ec.clear();
  if (fs::exists(status) && !fs::is_directory(status))
    throw IoError(named + ": exists and is not a directory", "give a new path or an existing model directory");
  const fs::path parent = fs::path(target_).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) throw IoError("cannot create directory " + parent.string() + ": " + ec.message());
  existed_ = fs::exists(fs::symlink_status(target_, ec));
  temp_ = temp_path_beside(target_);
  if (!fs::create_directory(temp_, ec) || ec)
    throw IoError("cannot create directory " + temp_ + ": " + (ec ? ec.message() : "already exists"),
                  "check that " + (parent.empty() ? std::string(".") : parent.string()) + " is writable");
}

AtomicDirectory::~AtomicDirectory() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(temp_, ec);
}

std::string AtomicDirectory::file(const std::string& name) const { return (fs::path(temp_) / name).string(); }

// Renames temp_ onto target_ (which does not exist): never over a directory that appeared meanwhile.
void AtomicDirectory::install_new() {
  if (::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, target_.c_str(), RENAME_NOREPLACE) == 0) return;
  if (errno == EEXIST || errno == ENOTEMPTY)
    throw IoError("cannot create " + target_ + ": it appeared while it was being written",
                  "write to a new directory, or remove " + target_ + " and retry");
  if (errno != EINVAL && errno != ENOSYS)
    throw IoError("cannot rename " + temp_ + " to " + target_ + ": " + std::strerror(errno));
  if (std::rename(temp_.c_str(), target_.c_str()) != 0)  // a file system without renameat2 flags
    throw IoError("cannot rename " + temp_ + " to " + target_ + ": " + std::strerror(errno));
}

// Puts temp_ in place of the existing target_; returns where the old directory now is (to remove).
std::string AtomicDirectory::replace_existing() {
  if (::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) return temp_;
  if (errno == ENOENT) {  // removed meanwhile
    install_new();
    return {};
  }
  if (errno != EINVAL && errno != ENOSYS)
    throw IoError("cannot replace " + target_ + ": " + std::strerror(errno));
  const std::string aside = temp_path_beside(target_ + ".old");
  if (std::rename(target_.c_str(), aside.c_str()) != 0)
    throw IoError("cannot move " + target_ + " aside: " + std::strerror(errno));
  if (std::rename(temp_.c_str(), target_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::rename(aside.c_str(), target_.c_str());  // put the old one back
    throw IoError("cannot rename " + temp_ + " to " + target_ + ": " + why);
  }
  return aside;
}

void AtomicDirectory::commit() {
  for (const auto& entry : fs::directory_iterator(temp_))
    if (entry.is_regular_file()) fsync_path(entry.path().string());
  fsync_path(temp_);
  std::string old;
  if (existed_) old = replace_existing();
  else install_new();
  committed_ = true;
  const fs::path parent = fs::path(target_).parent_path();
  fsync_path(parent.empty() ? "." : parent.string());
  std::error_code ec;
  if (!old.empty()) fs::remove_all(old, ec);
}

}  // namespace tt::util
