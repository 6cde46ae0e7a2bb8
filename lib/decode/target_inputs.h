// What tt-translate reads beside each input line: the --target-prefix and --constraints files, one line
// per input line each, read in step with the input. A prefix line is raw target text; a constraints line
// holds tab-separated target phrases; an empty line is none. Both are in the input's format (text goes
// through the target SentencePiece model).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "decode/search.h"
#include "util/text_io.h"

namespace tt::decode {

struct TranslatorInputs {
  util::LineReader* prefixes = nullptr;     // --target-prefix (null: none)
  util::LineReader* constraints = nullptr;  // --constraints (null: none)
};

// One input line's target-side inputs.
struct LineTargets {
  std::vector<int32_t> prefix;
  Constraints constraints;            // each phrase's ids
  std::vector<std::string> phrases;   // each phrase as given, for messages
  std::string constraints_where;      // "FILE:LINE" of the constraints line
};

class TargetInputReader {
 public:
  // encode(text, where): a target text's ids; throws tt::FormatError naming `where` for bad input.
  using Encode = std::function<std::vector<int32_t>(const std::string& text, const std::string& where)>;
  TargetInputReader(const TranslatorInputs& files, Encode encode);
  // The next line of each file, for input line `line` (1-based) of `input`; tt::FormatError naming the
  // file when it has ended, or when a line is not valid UTF-8.
  LineTargets next(const std::string& input, size_t line);
  // After the input's last line: tt::FormatError when a file has more lines.
  void finish(const std::string& input, size_t lines);

 private:
  TranslatorInputs files_;
  Encode encode_;
  std::string line_;
};

}  // namespace tt::decode
