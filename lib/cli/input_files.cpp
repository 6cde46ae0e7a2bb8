#include "cli/input_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.h"

namespace tt::cli {

namespace {

// Closes the descriptor however the check ends.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void fail(const std::string& path, const std::string& what, const std::string& reason,
                       const std::string& hint) {
  throw IoError((what.empty() ? "" : what + " ") + path + ": cannot read: " + reason, hint);
}

}  // namespace

void check_input_file(const std::string& path, const std::string& what) {
  if (path == "-") return;
  Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0) {
    const int error = errno;
    fail(path, what, std::strerror(error),
         error == ENOENT ? "check the path (it is relative to the current directory)" : "check the file's permissions");
  }
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) fail(path, what, std::strerror(errno), "");
  if (S_ISDIR(st.st_mode)) fail(path, what, "it is a directory", "pass a file inside it");
  if (S_ISREG(st.st_mode)) {
    char byte;
    if (::pread(file.fd, &byte, 1, 0) < 0) fail(path, what, std::strerror(errno), "check the file and its disk");
  }
}

void check_input_files(const std::vector<std::string>& paths, const std::string& what) {
  for (const auto& path : paths) check_input_file(path, what);
}

}  // namespace tt::cli
