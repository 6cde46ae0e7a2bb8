#include "data/line_pipeline.h"

#include <catch2/catch.hpp>

#include "support/tmp_dir.h"
#include "util/error.h"

using tt::data::LinePipelineOptions;
using tt::test::TmpDir;

namespace {

// Runs the pipeline over `text` with a line function that makes later lines cheaper than earlier ones in
// each chunk (so workers finish out of order) and tags every line with its content length.
std::string run(const std::string& text, int threads, size_t chunk_lines, size_t* count = nullptr) {
  TmpDir dir;
  tt::util::LineReader reader(dir.write("in.txt", text));
  LinePipelineOptions options;
  options.threads = threads;
  options.chunk_lines = chunk_lines;
  std::string output;
  size_t n = tt::data::run_line_pipeline(
      reader,
      [](const std::string& line, std::string& out) {
        volatile unsigned spin = 0;
        for (size_t i = 0; i < (line.size() % 7) * 20000; ++i) spin = spin + 1;
        out += std::to_string(line.size()) + ":" + line;
      },
      [&](const std::string& chunk) { output += chunk; }, options);
  if (count) *count = n;
  return output;
}

std::string numbered_lines(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) text += (i % 5 == 0 ? std::string() : "line " + std::to_string(i * 37 % 101)) + "\n";
  return text;
}

}  // namespace

TEST_CASE("the pipeline preserves order and empty lines on any number of threads", "[data]") {
  const std::string text = numbered_lines(1000);
  size_t count = 0;
  const std::string expected = run(text, 1, 4096, &count);
  CHECK(count == 1000);
  CHECK(expected.rfind("0:\n", 0) == 0);  // line 0 is empty: empty in, empty (tagged) out
  CHECK(expected.find("\n7:line 37\n") != std::string::npos);
  for (int threads : {2, 3, 8}) {
    for (size_t chunk : {size_t{1}, size_t{7}, size_t{4096}}) {
      INFO("threads " << threads << ", chunk " << chunk);
      CHECK(run(text, threads, chunk) == expected);
    }
  }
}

TEST_CASE("the pipeline handles no input, a missing final newline and very long lines", "[data]") {
  CHECK(run("", 3, 2).empty());
  CHECK(run("a\nbc", 2, 1) == "1:a\n2:bc\n");
  const std::string long_line(5 << 20, 'x');
  std::string out = run("a\n" + long_line + "\nb\n", 2, 4);
  CHECK(out.size() == 4 + 8 + long_line.size() + 1 + 4);  // "1:a\n" "5242880:" line "\n" "1:b\n"
  CHECK(out.compare(out.size() - 4, 4, "1:b\n") == 0);
}

TEST_CASE("a failing line is named, and every line before it is written first", "[data]") {
  std::string text;
  for (int i = 1; i <= 100; ++i) text += (i == 57 ? "BAD" : "ok") + std::string("\n");
  for (int threads : {1, 2, 4}) {
    INFO("threads " << threads);
    TmpDir dir;
    tt::util::LineReader reader(dir.write("in.txt", text));
    LinePipelineOptions options;
    options.threads = threads;
    options.chunk_lines = 10;
    std::string output;
    auto good = [](const std::string& line, std::string& out) {
      if (line == "BAD") throw tt::FormatError("cannot take this", "a hint");
      out += line;
    };
    try {
      tt::data::run_line_pipeline(reader, good, [&](const std::string& s) { output += s; }, options);
      FAIL("no error thrown");
    } catch (const tt::FormatError& e) {
      CHECK(std::string(e.what()) == dir.file("in.txt") + ":57: cannot take this");
      CHECK(e.hint() == "a hint");
    }
    std::string expected;
    for (int i = 1; i < 57; ++i) expected += "ok\n";
    CHECK(output == expected);
  }
}

TEST_CASE("output a line function wrote before failing is not written", "[data]") {
  TmpDir dir;
  tt::util::LineReader reader(dir.write("in.txt", "a\nb\n"));
  std::string output;
  auto fn = [](const std::string& line, std::string& out) {
    out += "half-" + line;
    if (line == "b") throw tt::FormatError("no");
  };
  CHECK_THROWS_WITH(tt::data::run_line_pipeline(reader, fn, [&](const std::string& s) { output += s; }),
                    Catch::EndsWith(":2: no"));
  CHECK(output == "half-a\n");
}

TEST_CASE("threads must be at least one", "[data]") {
  TmpDir dir;
  tt::util::LineReader reader(dir.write("in.txt", "a\n"));
  LinePipelineOptions options;
  options.threads = 0;
  CHECK_THROWS_AS(tt::data::run_line_pipeline(reader, [](const std::string&, std::string&) {},
                                              [](const std::string&) {}, options),
                  tt::ConfigError);
}
