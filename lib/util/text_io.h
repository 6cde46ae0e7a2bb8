// Line-oriented text input and output shared by the tools: files or stdin ("-"), lines split at LF only
// (a CR stays part of the line, as sacreBLEU and spm_encode read it), line numbers for messages.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace tt::util {

class LineReader {
 public:
  // path "-" reads stdin. Throws tt::IoError naming the path if it cannot be opened.
  explicit LineReader(const std::string& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Reads the next line without its '\n'. Returns false at end of input.
  bool next(std::string& line);
  // 1-based number of the line last returned by next().
  size_t line_number() const { return line_number_; }
  // "file.txt" or "<stdin>", for messages.
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::FILE* file_ = nullptr;
  bool owns_ = false;
  size_t line_number_ = 0;
  char* buffer_ = nullptr;
  size_t capacity_ = 0;
};

// All lines of a file (or stdin for "-").
std::vector<std::string> read_lines(const std::string& path);

// True if `s` is well-formed UTF-8; on failure `bad_offset` is the byte offset of the first bad byte.
bool is_valid_utf8(const std::string& s, size_t* bad_offset = nullptr);

// Write to stdout, throwing tt::BrokenPipe when the reader has gone away and tt::IoError on other failures.
// Buffered here and written whole lines at a time; under a SignalGuard with SignalPolicy::whole_lines a
// signal stops the output at a line end (tt::Interrupted). flush_stdout() writes everything.
void write_stdout(const std::string& data);
void flush_stdout();

}  // namespace tt::util
