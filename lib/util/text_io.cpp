#include "util/text_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "util/error.h"
#include "util/signals.h"

namespace tt::util {

LineReader::LineReader(const std::string& path) {
  if (path == "-") {
    name_ = "<stdin>";
    file_ = stdin;
  } else {
    name_ = path;
    file_ = std::fopen(path.c_str(), "rb");
    if (!file_) throw IoError(path + ": cannot open: " + std::strerror(errno));
    owns_ = true;
  }
}

LineReader::~LineReader() {
  if (owns_) std::fclose(file_);
  std::free(buffer_);
}

bool LineReader::next(std::string& line) {
  ssize_t n = ::getline(&buffer_, &capacity_, file_);
  if (n < 0) {
    if (std::ferror(file_)) throw IoError(name_ + ": read error: " + std::strerror(errno));
    return false;
  }
  if (n > 0 && buffer_[n - 1] == '\n') --n;
  line.assign(buffer_, static_cast<size_t>(n));
  ++line_number_;
  return true;
}

std::vector<std::string> read_lines(const std::string& path) {
  LineReader reader(path);
  std::vector<std::string> lines;
  std::string line;
  while (reader.next(line)) lines.push_back(line);
  return lines;
}

bool is_valid_utf8(const std::string& s, size_t* bad_offset) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned c = p[i];
    size_t len;
    unsigned cp;
    if (c < 0x80) { ++i; continue; }
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
    else break;
    if (i + len > n) break;
    size_t k = 1;
    for (; k < len && (p[i + k] & 0xC0) == 0x80; ++k) cp = (cp << 6) | (p[i + k] & 0x3F);
    if (k != len) break;
    // Reject overlong forms, surrogates and values past U+10FFFF.
    static const unsigned min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) break;
    i += len;
  }
  if (i < n && bad_offset) *bad_offset = i;
  return i == n;
}

namespace {

// Standard output is written from here with write(2), whole lines at a time, so that a signal can stop a
// filter between two lines (util/signals.h): to a pipe or terminal in pieces of at most PIPE_BUF bytes,
// which a pipe takes all or nothing, so only a line longer than that can be cut by a signal, and then it
// is finished first.
constexpr size_t kBufferBytes = size_t{1} << 16;
std::mutex g_out_mutex;
std::string g_out;  // lines not yet written (at the very end, perhaps a last one without '\n')

size_t piece_bytes() {
  static const size_t bytes = [] {
    struct stat st {};
    return ::fstat(STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode) ? kBufferBytes : size_t{PIPE_BUF};
  }();
  return bytes;
}

[[noreturn]] void write_failed(int error) {
  if (error == EPIPE) throw BrokenPipe();
  throw IoError(std::string("<stdout>: write failed: ") + std::strerror(error));
}

// Writes g_out[0, upto) and erases it; `upto` ends a line or the output.
void drain(size_t upto) {
  if (std::fflush(stdout) != 0) write_failed(errno);  // anything written through stdio comes first
  auto line_start = [](size_t at) { return at == 0 || g_out[at - 1] == '\n'; };
  size_t done = 0;
  {
    StdoutWrite writing;
    const size_t piece = piece_bytes();
    while (done < upto && !(stop_signal() && line_start(done))) {
      size_t end = std::min(upto, done + piece);
      if (end < upto) {  // end the piece at a line end: the last one inside it, else the first after it
        const size_t last = g_out.rfind('\n', end - 1);
        const size_t next = last != std::string::npos && last >= done ? last : g_out.find('\n', end);
        end = next == std::string::npos ? upto : std::min(upto, next + 1);
      }
      const ssize_t n = ::write(STDOUT_FILENO, g_out.data() + done, end - done);
      if (n < 0 && errno == EINTR) continue;  // woken by a signal: the loop's test decides
      if (n < 0) {
        const int error = errno;
        g_out.clear();
        write_failed(error);
      }
      done += static_cast<size_t>(n);
    }
  }
  g_out.erase(0, done);
  if (const int signo = stop_signal()) {
    g_out.clear();
    throw Interrupted(signo);
  }
}

}  // namespace

void write_stdout(const std::string& data) {
  std::lock_guard<std::mutex> lock(g_out_mutex);
  g_out += data;
  if (g_out.size() < kBufferBytes) return;
  const size_t last = g_out.rfind('\n');
  if (last != std::string::npos) drain(last + 1);
}

void flush_stdout() {
  std::lock_guard<std::mutex> lock(g_out_mutex);
  drain(g_out.size());
}

}  // namespace tt::util
