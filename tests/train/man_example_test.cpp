// The copy-task smoke run in man tt-train, run as the page writes it: the commands are read from the
// page's EXAMPLES (so the page cannot drift from what holds), run through the shell with the built tools
// and a temporary model directory, and their output held to what the page shows: each "step N/M  loss X
// ..." line within 0.05 of X (another CPU's kernels may differ in the last digits), every other
// output line exactly.
#include <catch2/catch.hpp>
#include <regex>
#include <sstream>

#include "support/run_command.h"
#include "support/tmp_dir.h"

namespace {

struct Example {
  std::string command;                // one shell command line, continuations joined
  std::vector<std::string> expected;  // the lines the page shows after it
};

// The .EX block after the paragraph starting with `marker`, roff escapes undone.
std::vector<Example> examples_after(const std::string& roff, const std::string& marker) {
  const size_t at = roff.find(marker);
  REQUIRE(at != std::string::npos);
  const size_t begin = roff.find("\n.EX\n", at), end = roff.find("\n.EE\n", begin);
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::string block = roff.substr(begin + 5, end - begin - 5);
  block = std::regex_replace(block, std::regex(R"(\\-)"), "-");
  std::vector<Example> out;
  std::istringstream in(block);
  bool continued = false;
  for (std::string line; std::getline(in, line);) {
    const bool continues = line.size() >= 2 && line.compare(line.size() - 2, 2, "\\e") == 0;
    if (continues) line.erase(line.size() - 2);
    if (continued) {
      out.back().command.append(" ").append(line, line.find_first_not_of(' '));
    } else if (line.rfind("$ ", 0) == 0) {
      out.push_back({line.substr(2), {}});
    } else {
      REQUIRE_FALSE(out.empty());
      out.back().expected.push_back(line);
    }
    continued = continues;
  }
  return out;
}

// "step 200/200  loss 0.6002 ..." -> {"step 200/200", 0.6002}
bool step_loss(const std::string& line, std::string& step, double& loss) {
  static const std::regex re(R"((step [0-9]+/[0-9]+)  loss ([0-9.]+).*)");
  std::smatch m;
  if (!std::regex_match(line, m, re)) return false;
  step = m[1];
  loss = std::stod(m[2]);
  return true;
}

}  // namespace

TEST_CASE("man tt-train: the copy-task smoke run learns to copy, as the page shows", "[tt-train][man]") {
  const auto examples = examples_after(tt::test::read_file(std::string(TT_SOURCE_DIR) + "/man/tt-train.1"),
                                       "A smoke run of a few seconds that learns to copy");
  REQUIRE(examples.size() == 3);  // train, reload, translate
  tt::test::TmpDir dir;
  for (const Example& e : examples) {
    std::string command = std::regex_replace(e.command, std::regex(R"(\btt-(train|translate)\b)"),
                                             std::string(TT_BIN_DIR) + "/tt-$1");
    command = std::regex_replace(command, std::regex(R"(\bcopy-model\b)"), dir.file("copy-model"));
    INFO(command);
    const auto r = tt::test::run_command(command);
    REQUIRE(r.status == 0);
    REQUIRE_FALSE(e.expected.empty());
    for (const std::string& line : e.expected) {
      std::string step;
      double documented = 0;
      if (step_loss(line, step, documented)) {
        const size_t at = r.err.find("\n" + step + "  loss ");  // stderr starts with the header line
        REQUIRE(at != std::string::npos);
        std::string got_step;
        double got = 0;
        REQUIRE(step_loss(r.err.substr(at + 1, r.err.find('\n', at + 1) - at - 1), got_step, got));
        INFO(line);
        CHECK(got == Approx(documented).margin(0.05));
      } else {
        CHECK(r.out == line + "\n");
      }
    }
  }
  // The claims in words: the loss falls from above 5 to near the floor label smoothing leaves, 0.565 over
  // 16 ids (q = 0.9 onehot + 0.1 / 16); the reloaded model starts there.
  std::string step;
  double first = 0, last = 0, reloaded = 0;
  REQUIRE(step_loss(examples[0].expected.front(), step, first));
  REQUIRE(step_loss(examples[0].expected.back(), step, last));
  REQUIRE(step_loss(examples[1].expected.front(), step, reloaded));
  CHECK(first > 5.0);
  CHECK(last < 0.62);
  CHECK(reloaded < 0.62);
}
