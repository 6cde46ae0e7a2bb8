#include "train/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "util/error.h"

namespace fs = std::filesystem;

namespace tt::train {

namespace {

// The PID the holder wrote ("" while it has not written it yet, in the instant after its flock()).
std::string holder_pid(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  std::string pid;
  for (ssize_t i = 0; i < n && text[i] >= '0' && text[i] <= '9'; ++i) pid += text[i];
  return pid;
}

}  // namespace

RunLock::RunLock(const std::string& run_dir) : path_((fs::path(run_dir) / run_lock_file_name).string()) {
  std::error_code ec;
  fs::create_directories(run_dir, ec);
  if (ec) throw IoError("cannot create the run directory " + run_dir + ": " + ec.message());
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw IoError("cannot create the lock file " + path_ + ": " + std::strerror(errno),
                             "check that " + run_dir + " is writable");
  int rc;
  do rc = ::flock(fd_, LOCK_EX | LOCK_NB);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int error = errno;
    std::string pid = holder_pid(fd_);
    // The holder writes its PID right after its flock(): give a holder that has just started a moment.
    for (int i = 0; i < 50 && pid.empty() && error == EWOULDBLOCK; ++i) {
      ::usleep(2000);
      pid = holder_pid(fd_);
    }
    ::close(fd_);
    if (error == EWOULDBLOCK) {
      const std::string who = pid.empty() ? "another process" : "another process (pid " + pid + ")";
      throw Error(run_dir + " is in use: " + who + " holds " + path_,
                  "a run directory takes one tt-train at a time: wait for " +
                      (pid.empty() ? std::string("it") : "pid " + pid) + " to finish, or stop it");
    }
    throw IoError("cannot lock " + path_ + ": " + std::strerror(error));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const std::string why = std::strerror(errno);
    ::close(fd_);
    throw IoError("cannot write " + path_ + ": " + why);
  }
}

RunLock::~RunLock() {
  // Emptied while still held, so the file names no PID when nobody holds it. A failure changes nothing
  // that matters: the lock goes with the descriptor, and a stale PID only words a message.
  [[maybe_unused]] const int emptied = ::ftruncate(fd_, 0);
  ::close(fd_);
}

}  // namespace tt::train
