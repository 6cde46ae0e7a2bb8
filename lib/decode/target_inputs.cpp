#include "decode/target_inputs.h"

#include "util/error.h"

namespace tt::decode {

namespace {

std::string where(const util::LineReader& file) { return file.name() + ":" + std::to_string(file.line_number()); }

const char* hint(const util::LineReader& file, const TranslatorInputs& files) {
  return &file == files.prefixes ? "give one prefix line (empty for none) for every input line"
                                 : "give one line of tab-separated phrases (empty for none) for every input line";
}

}  // namespace

TargetInputReader::TargetInputReader(const TranslatorInputs& files, Encode encode)
    : files_(files), encode_(std::move(encode)) {}

LineTargets TargetInputReader::next(const std::string& input, size_t line) {
  LineTargets t;
  for (util::LineReader* file : {files_.prefixes, files_.constraints}) {
    if (!file) continue;
    if (!file->next(line_))
      throw FormatError(file->name() + " has " + std::to_string(line - 1) + " lines, fewer than " + input, hint(*file, files_));
    size_t bad = 0;
    if (!util::is_valid_utf8(line_, &bad))
      throw FormatError(where(*file) + ": invalid UTF-8 at byte " + std::to_string(bad + 1));
    if (file == files_.prefixes) {
      t.prefix = encode_(line_, where(*file));
      continue;
    }
    t.constraints_where = where(*file);
    for (size_t start = 0; start <= line_.size();) {
      size_t end = line_.find('\t', start);
      if (end == std::string::npos) end = line_.size();
      const std::string phrase = line_.substr(start, end - start);
      if (phrase.find_first_not_of(" \r") != std::string::npos) {
        t.phrases.push_back(phrase);
        t.constraints.push_back(encode_(phrase, t.constraints_where));
      }
      start = end + 1;
    }
  }
  return t;
}

void TargetInputReader::finish(const std::string& input, size_t lines) {
  for (util::LineReader* file : {files_.prefixes, files_.constraints})
    if (file && file->next(line_))
      throw FormatError(file->name() + " has more lines than " + input + " (" + std::to_string(lines) + ")",
                        hint(*file, files_));
}

}  // namespace tt::decode
