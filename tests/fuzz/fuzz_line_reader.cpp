// The line reader (util::LineReader, metrics::read_corpus) and the order-preserving line pipeline on
// arbitrary bytes: lines split at LF only, nothing lost or reordered on 1 or 3 threads, bad UTF-8
// refused with a tt::Error naming the line.
#include <cstdint>
#include <string>

#include "data/line_pipeline.h"
#include "fuzz_support.h"
#include "metrics/corpus_reader.h"
#include "util/error.h"
#include "util/text_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = tt::fuzz::input_file(data, size);
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> lines = tt::util::read_lines(path);
  std::string joined;
  for (const auto& l : lines) joined += l + "\n";
  if (!(joined == input || joined == input + "\n")) __builtin_trap();  // a last line without LF
  try {
    (void)tt::metrics::read_corpus(path);
  } catch (const tt::Error&) {
  }
  for (int threads : {1, 3}) {
    tt::util::LineReader reader(path);
    tt::data::LinePipelineOptions options;
    options.threads = threads;
    options.chunk_lines = 2;  // many chunks even for small inputs
    std::string out;
    try {
      tt::data::run_line_pipeline(
          reader,
          [](const std::string& line, std::string& o) {
            if (!tt::util::is_valid_utf8(line)) throw tt::FormatError("invalid UTF-8");
            o += line;
          },
          [&](const std::string& text) { out += text; }, options);
      if (out != joined) __builtin_trap();
    } catch (const tt::Error&) {
      if (joined.compare(0, out.size(), out) != 0) __builtin_trap();  // the lines before the bad one
    }
  }
  return 0;
}
