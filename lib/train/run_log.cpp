#include "train/run_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/error.h"

namespace tt::train {

int64_t drop_partial_last_line(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return 0;
    throw IoError("cannot open the log " + path + " (" + std::strerror(errno) + ")");
  }
  auto fail = [&](const char* what) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return IoError("cannot " + std::string(what) + " the log " + path + " (" + why + ")");
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw fail("read");
  if (!S_ISREG(st.st_mode)) {  // a FIFO or /dev/stdout given as --log: nothing to repair
    ::close(fd);
    return 0;
  }
  const off_t size = st.st_size;
  off_t keep = size;  // bytes up to and including the last '\n'
  char buffer[4096];
  for (off_t end = size; end > 0;) {
    const off_t begin = std::max<off_t>(0, end - static_cast<off_t>(sizeof buffer));
    const ssize_t n = ::pread(fd, buffer, static_cast<size_t>(end - begin), begin);
    if (n != end - begin) throw fail("read");
    if (end == size && buffer[n - 1] == '\n') break;  // the usual case: it ends cleanly
    const char* newline = static_cast<const char*>(::memrchr(buffer, '\n', static_cast<size_t>(n)));
    if (newline) {
      keep = begin + (newline - buffer) + 1;
      break;
    }
    keep = end = begin;
  }
  if (keep != size && (::ftruncate(fd, keep) != 0 || ::fsync(fd) != 0)) throw fail("truncate");
  ::close(fd);
  return static_cast<int64_t>(size - keep);
}

RunLog::RunLog(std::string path) : path_(std::move(path)), dropped_bytes_(drop_partial_last_line(path_)) {
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
