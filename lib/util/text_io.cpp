#include "util/text_io.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "util/error.h"

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

void write_stdout(const std::string& data) {
  if (std::fwrite(data.data(), 1, data.size(), stdout) != data.size()) {
    if (errno == EPIPE) throw BrokenPipe();
    throw IoError(std::string("<stdout>: write failed: ") + std::strerror(errno));
  }
}

void flush_stdout() {
  if (std::fflush(stdout) != 0) {
    if (errno == EPIPE) throw BrokenPipe();
    throw IoError(std::string("<stdout>: write failed: ") + std::strerror(errno));
  }
}

}  // namespace tt::util
