// What every tt tool promises a shell user, checked on the real binaries: --help and --version on stdout
// with exit 0, a bad flag gives one message on stderr and exit 2, and every long option the tool accepts is
// documented in its man page and offered by its bash, zsh and fish completions (one truth for flags).
#include <catch2/catch.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "support/run_command.h"
#include "support/tmp_dir.h"

using tt::test::run_command;
using tt::test::tool;

namespace {

std::vector<std::string> tool_names() {
  std::vector<std::string> names;
  std::stringstream list(TT_TOOL_LIST);
  for (std::string name; list >> name;)
    if (!name.empty()) names.push_back(name);
  return names;
}

// Long options and subcommand names listed by CLI11's help text.
void parse_help(const std::string& help, std::set<std::string>& options, std::vector<std::string>& subcommands) {
  std::istringstream in(help);
  std::string line, section;
  static const std::regex long_option(R"(--[a-z0-9][a-z0-9-]*)");
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ') {
      section = line;
      continue;
    }
    std::string first = line.substr(0, std::min<size_t>(line.size(), 34));
    if (section.rfind("Subcommands", 0) == 0) {
      std::istringstream words(line);
      std::string word;
      if (words >> word) subcommands.push_back(word);
    } else {
      for (std::sregex_iterator it(first.begin(), first.end(), long_option), end; it != end; ++it)
        options.insert(it->str());
    }
  }
}

// Man pages write "\-\-flag", "\fB\-\-flag\fR"; strip roff escapes before searching.
std::string plain_roff(std::string text) {
  static const std::regex font(R"(\\f[BIRP])");
  text = std::regex_replace(text, font, "");
  static const std::regex dash(R"(\\-)");
  return std::regex_replace(text, dash, "-");
}

}  // namespace

TEST_CASE("every tool answers --help and --version on stdout with exit 0", "[cli]") {
  for (const auto& name : tool_names()) {
    INFO(name);
    auto help = run_command(tool(name) + " --help");
    CHECK(help.status == 0);
    CHECK(help.out.find("Usage") != std::string::npos);
    CHECK(help.err.empty());
    auto version = run_command(tool(name) + " --version");
    CHECK(version.status == 0);
    CHECK(version.out.rfind(name + " ", 0) == 0);
  }
}

TEST_CASE("a bad flag is a usage error: exit 2, one message on stderr, nothing on stdout", "[cli]") {
  for (const auto& name : tool_names()) {
    INFO(name);
    auto r = run_command(tool(name) + " --no-such-flag-xyz");
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(name + ": error:") != std::string::npos);
  }
}

TEST_CASE("every long option is in the man page and in bash, zsh and fish completions", "[cli]") {
  const std::string root = TT_SOURCE_DIR;
  for (const auto& name : tool_names()) {
    std::set<std::string> options;
    std::vector<std::string> subcommands;
    parse_help(run_command(tool(name) + " --help").out, options, subcommands);
    for (const auto& sub : subcommands) {
      std::vector<std::string> nested;
      parse_help(run_command(tool(name) + " " + sub + " --help").out, options, nested);
    }
    REQUIRE_FALSE(options.empty());
    const std::string man = plain_roff(tt::test::read_file(root + "/man/" + name + ".1"));
    const std::string bash = tt::test::read_file(root + "/completions/bash/" + name);
    const std::string zsh = tt::test::read_file(root + "/completions/zsh/_" + name);
    const std::string fish = tt::test::read_file(root + "/completions/fish/" + name + ".fish");
    REQUIRE_FALSE(man.empty());
    REQUIRE_FALSE(bash.empty());
    REQUIRE_FALSE(zsh.empty());
    REQUIRE_FALSE(fish.empty());
    for (const auto& option : options) {
      INFO(name << " " << option);
      CHECK(man.find(option) != std::string::npos);
      CHECK(bash.find(option) != std::string::npos);
      CHECK(zsh.find(option) != std::string::npos);
      const std::string bare = option.substr(2);
      const bool in_fish = fish.find("-l " + bare) != std::string::npos ||
                           fish.find("--long-option " + bare) != std::string::npos ||
                           fish.find("--long " + bare) != std::string::npos;
      CHECK(in_fish);
    }
    for (const auto& sub : subcommands) {
      INFO(name << " subcommand " << sub);
      CHECK(man.find(sub) != std::string::npos);
      CHECK(bash.find(sub) != std::string::npos);
      CHECK(zsh.find(sub) != std::string::npos);
      CHECK(fish.find(sub) != std::string::npos);
    }
  }
}
