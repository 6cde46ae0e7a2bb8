#include "metrics/corpus_reader.h"

#include "metrics/unicode_text.h"
#include "util/error.h"
#include "util/text_io.h"

namespace tt::metrics {

std::string display_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

std::vector<std::string> read_corpus(const std::string& path) {
  util::LineReader reader(path);
  std::vector<std::string> lines;
  std::string line;
  while (reader.next(line)) {
    size_t bad = 0;
    if (!util::is_valid_utf8(line, &bad)) {
      throw FormatError(reader.name() + ":" + std::to_string(reader.line_number()) +
                            ": invalid UTF-8 at byte " + std::to_string(bad + 1) + " of the line",
                        "convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8)");
    }
    lines.emplace_back(rstrip(line));
  }
  return lines;
}

void check_same_length(const std::vector<std::string>& hyps, const std::string& hyp_name,
                       const std::vector<std::string>& refs, const std::string& ref_name) {
  if (hyps.size() == refs.size()) return;
  throw FormatError("system and reference streams have different lengths: " + display_name(hyp_name) + " has " +
                        std::to_string(hyps.size()) + " lines, " + display_name(ref_name) + " has " +
                        std::to_string(refs.size()),
                    "every hypothesis line needs exactly one line in each reference file");
}

}  // namespace tt::metrics
