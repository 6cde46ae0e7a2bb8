// What every tt tool promises a shell user, checked on the real binaries: --help and --version on stdout
// with exit 0, a bad flag gives one message on stderr and exit 2, and the flags in --help, the man page and
// the bash, zsh and fish completions are the same set, both ways (one truth for flags). The tools come from
// TT_TOOL_LIST (tools/CMakeLists.txt), so a new tool is held to this from its first commit.
#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
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

// Long options and subcommand names listed by CLI11's help text. An option line starts with its names
// ("  -m,--model TEXT REQUIRED ..."); only that first word counts, not "Needs: --alpha" after it.
void parse_help(const std::string& help, std::set<std::string>& options, std::vector<std::string>& subcommands) {
  std::istringstream in(help);
  std::string line, section;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ') {
      section = line;
      continue;
    }
    std::istringstream words(line);
    std::string first;
    if (!(words >> first)) continue;
    if (section.rfind("Subcommands", 0) == 0) {
      subcommands.push_back(first);
    } else if (line.rfind("  -", 0) == 0) {
      std::stringstream names(first);
      for (std::string name; std::getline(names, name, ',');)
        if (name.rfind("--", 0) == 0) options.insert(name);
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

// Every match of group 1 of `pattern` in `text`.
std::set<std::string> matches(const std::string& text, const std::string& pattern) {
  std::set<std::string> out;
  const std::regex re(pattern);
  for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) out.insert((*it)[1].str());
  return out;
}

// Long options named in the man page's option lists: the tag line after each .TP (".BR \-i ", " \-\-input").
std::set<std::string> man_options(const std::string& roff) {
  std::set<std::string> options;
  std::istringstream in(roff);
  bool tag = false;
  for (std::string line; std::getline(in, line);) {
    if (tag) {
      for (const auto& o : matches(plain_roff(line), R"((--[a-z0-9][a-z0-9-]*))")) options.insert(o);
    }
    tag = line.rfind(".TP", 0) == 0 || line.rfind(".TQ", 0) == 0;  // .TQ: one more tag for the same text
  }
  return options;
}

// Long options a fish completion file offers: "-l NAME" on its `complete` lines (not "set -l var").
std::set<std::string> fish_options(const std::string& fish) {
  std::set<std::string> out;
  std::istringstream in(fish);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("complete ", 0) != 0) continue;
    for (const auto& o : matches(line, R"((?:^|\s)(?:-l|--long|--long-option) ([a-z0-9][a-z0-9-]*))")) out.insert("--" + o);
  }
  return out;
}

// True if `word` occurs in `text` as a whole word (not inside "--vocab-size" or "vocabulary").
bool has_word(const std::string& text, const std::string& word) {
  return std::regex_search(text, std::regex("(^|[^A-Za-z0-9_-])" + word + "([^A-Za-z0-9_-]|$)"));
}

struct Docs {
  std::string man, bash, zsh, fish;
};

Docs read_docs(const std::string& name) {
  const std::string root = TT_SOURCE_DIR;
  return {plain_roff(tt::test::read_file(root + "/man/" + name + ".1")),
          tt::test::read_file(root + "/completions/bash/" + name),
          tt::test::read_file(root + "/completions/zsh/_" + name),
          tt::test::read_file(root + "/completions/fish/" + name + ".fish")};
}

// The flags a tool's --help lists (with every subcommand's), and its subcommands.
void help_of(const std::string& name, std::set<std::string>& options, std::vector<std::string>& subcommands) {
  parse_help(run_command(tool(name) + " --help").out, options, subcommands);
  for (const auto& sub : subcommands) {
    std::vector<std::string> nested;
    parse_help(run_command(tool(name) + " " + sub + " --help").out, options, nested);
  }
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

TEST_CASE("every long option in --help is in the man page and in bash, zsh and fish completions", "[cli]") {
  for (const auto& name : tool_names()) {
    std::set<std::string> options;
    std::vector<std::string> subcommands;
    help_of(name, options, subcommands);
    REQUIRE_FALSE(options.empty());
    const Docs d = read_docs(name);
    REQUIRE_FALSE(d.man.empty());
    REQUIRE_FALSE(d.bash.empty());
    REQUIRE_FALSE(d.zsh.empty());
    REQUIRE_FALSE(d.fish.empty());
    const std::string raw_man = tt::test::read_file(std::string(TT_SOURCE_DIR) + "/man/" + name + ".1");
    const std::set<std::string> in_man = man_options(raw_man);
    const std::set<std::string> in_fish = fish_options(d.fish);
    for (const auto& option : options) {
      INFO(name << " " << option);
      CHECK(in_man.count(option) == 1);  // documented in an option list, not just mentioned
      CHECK(has_word(d.bash, option));
      CHECK(has_word(d.zsh, option));
      CHECK(in_fish.count(option) == 1);
    }
  }
}

TEST_CASE("every long option in the man page and the completions exists in --help", "[cli]") {
  for (const auto& name : tool_names()) {
    std::set<std::string> options;
    std::vector<std::string> subcommands;
    help_of(name, options, subcommands);
    const Docs d = read_docs(name);
    const std::string raw_man = tt::test::read_file(std::string(TT_SOURCE_DIR) + "/man/" + name + ".1");
    const std::string long_option = R"((?:^|[^A-Za-z0-9_-])(--[a-z0-9][a-z0-9-]*))";
    const std::pair<const char*, std::set<std::string>> sources[] = {
        {"man page option list", man_options(raw_man)},
        {"bash completion", matches(d.bash, long_option)},
        {"zsh completion", matches(d.zsh, long_option)},
        {"fish completion", fish_options(d.fish)}};
    for (const auto& [where, documented] : sources) {
      CHECK_FALSE(documented.empty());
      for (const auto& option : documented) {
        INFO(name << ": " << option << " is in the " << where << " but not in --help (stale?)");
        CHECK(options.count(option) == 1);
      }
    }
  }
}

TEST_CASE("subcommands are documented and completed as whole words, and only real ones", "[cli]") {
  for (const auto& name : tool_names()) {
    std::set<std::string> options;
    std::vector<std::string> subcommands;
    help_of(name, options, subcommands);
    const Docs d = read_docs(name);
    const std::string raw_man = tt::test::read_file(std::string(TT_SOURCE_DIR) + "/man/" + name + ".1");
    const std::set<std::string> man_sections = matches(raw_man, R"((?:^|\n)\.SS ([a-z][a-z0-9-]*)\r?(?:\n|$))");
    for (const auto& sub : subcommands) {
      INFO(name << " subcommand " << sub);
      CHECK(man_sections.count(sub) == 1);  // its own ".SS sub" section
      CHECK(has_word(d.bash, sub));
      CHECK(has_word(d.zsh, sub));
      CHECK(has_word(d.fish, sub));
    }
    // A tool with subcommands documents no others: every lower-case .SS section is a real subcommand.
    if (!subcommands.empty()) {
      for (const auto& section : man_sections) {
        INFO(name << ": man section .SS " << section << " names no subcommand");
        CHECK(std::find(subcommands.begin(), subcommands.end(), section) != subcommands.end());
      }
    }
  }
}

TEST_CASE("man pages never break an option name across lines", "[cli]") {
  const std::string root = TT_SOURCE_DIR;
  std::vector<std::string> pages = {root + "/man/tt.7"};
  for (const auto& name : tool_names()) pages.push_back(root + "/man/" + name + ".1");
  const bool have_groff = run_command("command -v groff").status == 0;
  if (!have_groff) WARN("groff not found: only the roff source is checked");
  for (const auto& page : pages) {
    INFO(page);
    const std::string roff = tt::test::read_file(page);
    // Hyphenation off for the whole page (.nh, and HY 0 so the man macros do not turn it back on).
    CHECK(roff.find("\n.nh\n") != std::string::npos);
    CHECK(roff.find("\n.nr HY 0\n") != std::string::npos);
    // Option names are written \-\-name\-part: a raw '-' would be a break point.
    CHECK_FALSE(std::regex_search(roff, std::regex(R"(\\-\\-(?:[a-z0-9]|\\-)+-[a-z])")));
    CHECK_FALSE(std::regex_search(roff, std::regex(R"((^|[^\\])--[a-z])")));
    if (!have_groff) continue;
    for (int width : {40, 55, 70, 80}) {
      auto r = run_command("groff -man -Tutf8 -P-c -rLL=" + std::to_string(width) + "n " + page);
      REQUIRE(r.status == 0);
      std::istringstream lines(r.out);
      for (std::string line; std::getline(lines, line);) {
        INFO("width " << width << ": " << line);
        const bool hyphenated = line.size() >= 3 && line.compare(line.size() - 3, 3, "\u2010") == 0;
        CHECK_FALSE(hyphenated);
      }
    }
  }
}

TEST_CASE("man 7 tt lists exactly the tools that exist as man-page references", "[cli]") {
  const std::string tt7 = tt::test::read_file(std::string(TT_SOURCE_DIR) + "/man/tt.7");
  // "\fBtt-x\fR(1)" in the tool table and ".BR tt-x (1)" under SEE ALSO claim a tool exists.
  std::set<std::string> claimed = matches(tt7, R"(\\fB(tt-[a-z]+)\\fR\(1\))");
  for (const auto& t : matches(tt7, R"(\.BR (tt-[a-z]+) \(1\))")) claimed.insert(t);
  const auto tools = tool_names();
  for (const auto& t : claimed) {
    INFO(t << " is listed in man 7 tt as existing; mark it planned or add the tool");
    CHECK(std::find(tools.begin(), tools.end(), t) != tools.end());
  }
  for (const auto& t : tools) {
    INFO(t << " exists but man 7 tt does not list it");
    CHECK(claimed.count(t) == 1);
  }
}

TEST_CASE("completions/ holds what each tool writes from its flag definitions (--completions)", "[cli]") {
  const std::string root = TT_SOURCE_DIR;
  for (const auto& name : tool_names()) {
    const std::pair<const char*, std::string> files[] = {{"bash", root + "/completions/bash/" + name},
                                                         {"zsh", root + "/completions/zsh/_" + name},
                                                         {"fish", root + "/completions/fish/" + name + ".fish"}};
    for (const auto& [shell, path] : files) {
      INFO(path << " differs from `" << name << " --completions " << shell
                << "`: run scripts/update-completions.sh after changing a flag");
      const auto generated = run_command(tool(name) + " --completions " + shell);
      CHECK(generated.status == 0);
      CHECK(generated.out == tt::test::read_file(path));
    }
  }
  const auto bad = run_command(tool("tt-bleu") + " --completions tcsh");
  CHECK(bad.status == 2);
  CHECK(bad.err.find("expected bash, zsh or fish") != std::string::npos);
}

namespace {

// What bash offers for the words of `line` (the last one being completed), from completions/bash/TOOL,
// run in `dir`.
std::vector<std::string> bash_offers(const std::string& tool_name, const std::vector<std::string>& words,
                                     const std::string& dir) {
  std::string array;
  for (const auto& w : words) array.append(" ").append(tt::test::quoted(w));  // (`" " + ...`: a GCC 12 false warning)
  std::string fn = "_" + tool_name;
  std::replace(fn.begin(), fn.end(), '-', '_');
  const std::string script = "cd " + tt::test::quoted(dir) + " && source " +
                             tt::test::quoted(std::string(TT_SOURCE_DIR) + "/completions/bash/" + tool_name) +
                             " && COMP_WORDS=(" + array + ") && COMP_CWORD=" + std::to_string(words.size() - 1) +
                             " && " + fn + " && printf '%s\\n' \"${COMPREPLY[@]}\"\n";
  tt::test::TmpDir scripts;
  const auto r = run_command("bash " + tt::test::quoted(scripts.write("complete.sh", script)));
  REQUIRE(r.status == 0);
  std::vector<std::string> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("bash completion offers a flag's choices, directories or files, and subcommands", "[cli]") {
  tt::test::TmpDir dir;
  std::filesystem::create_directory(dir.file("model-dir"));
  dir.write("input.txt", "x\n");
  using V = std::vector<std::string>;
  CHECK(bash_offers("tt-translate", {"tt-translate", "--compute-type", ""}, dir.path()) ==
        V{"auto", "bf16", "float32", "int8"});
  CHECK(bash_offers("tt-translate", {"tt-translate", "-m", ""}, dir.path()) == V{"model-dir"});
  CHECK(bash_offers("tt-translate", {"tt-translate", "--input", ""}, dir.path()) == V{"input.txt", "model-dir"});
  CHECK(bash_offers("tt-translate", {"tt-translate", "--beam", ""}, dir.path()).empty());  // a number
  CHECK(bash_offers("tt-translate", {"tt-translate", "--comp"}, dir.path()) == V{"--compute-type"});
  CHECK(bash_offers("tt-tokenize", {"tt-tokenize", "en"}, dir.path()) == V{"encode"});
  CHECK(bash_offers("tt-tokenize", {"tt-tokenize", "train", "--model-type", "b"}, dir.path()) == V{"bpe"});
  CHECK(bash_offers("tt-tokenize", {"tt-tokenize", "encode", "--form"}, dir.path()) == V{"--format"});
  CHECK(bash_offers("tt-bleu", {"tt-bleu", "inp"}, dir.path()) == V{"input.txt"});  // the references
}

TEST_CASE("zsh and fish parse every completion file", "[cli]") {
  const std::string root = TT_SOURCE_DIR;
  for (const char* shell : {"zsh", "fish"}) {
    INFO(shell << " is needed to check the completions: scripts/install-deps.sh --test installs it");
    REQUIRE(run_command(std::string("command -v ") + shell).status == 0);
  }
  for (const auto& name : tool_names()) {
    for (const std::string& file : {root + "/completions/zsh/_" + name, root + "/completions/fish/" + name + ".fish"}) {
      INFO(file);
      const bool zsh = file.find("/zsh/") != std::string::npos;
      const auto r = run_command(std::string(zsh ? "zsh" : "fish") + " -n " + tt::test::quoted(file));
      CHECK(r.status == 0);
      CHECK(r.err.empty());
    }
  }
}
