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
  std::error_code ec;
  const fs::path parent = fs::path(target_).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) throw IoError("cannot create directory " + parent.string() + ": " + ec.message());
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

void AtomicDirectory::commit() {
  for (const auto& entry : fs::directory_iterator(temp_))
    if (entry.is_regular_file()) fsync_path(entry.path().string());
  fsync_path(temp_);
  std::error_code ec;
  std::string aside;
  if (fs::exists(fs::symlink_status(target_, ec))) {
    aside = temp_path_beside(target_ + ".old");
    if (std::rename(target_.c_str(), aside.c_str()) != 0)
      throw IoError("cannot move " + target_ + " aside: " + std::strerror(errno));
  }
  if (std::rename(temp_.c_str(), target_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    if (!aside.empty()) std::rename(aside.c_str(), target_.c_str());  // put the old one back
    throw IoError("cannot rename " + temp_ + " to " + target_ + ": " + why);
  }
  committed_ = true;
  const fs::path parent = fs::path(target_).parent_path();
  fsync_path(parent.empty() ? "." : parent.string());
  if (!aside.empty()) fs::remove_all(aside, ec);
}

}  // namespace tt::util
