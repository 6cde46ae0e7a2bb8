// tt-bleu run as a user runs it, against outputs that sacreBLEU 2.6.0 printed for the same fixtures
// (tests/data/metrics/cases.tsv and expected/, made by tests/data/metrics/make_expected.sh).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "support/run_command.h"
#include "support/tmp_dir.h"

using tt::test::read_file;
using tt::test::run_command;
using tt::test::tool;

namespace {
const std::string kFixtures = std::string(TT_TEST_DATA_DIR) + "/metrics";

tt::test::CommandResult bleu(const std::string& args, const std::string& stdin_text = {}) {
  return run_command("cd '" + kFixtures + "' && '" + tool("tt-bleu") + "' " + args, stdin_text);
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}
}  // namespace

TEST_CASE("tt-bleu prints what sacreBLEU printed for every fixture case", "[metrics][cli]") {
  std::ifstream cases(kFixtures + "/cases.tsv");
  std::string line;
  int n = 0;
  while (std::getline(cases, line)) {
    auto tab = line.find('\t');
    REQUIRE(tab != std::string::npos);
    std::string name = line.substr(0, tab), args = line.substr(tab + 1);
    INFO("case " << name << ": tt-bleu " << args);
    auto r = bleu(args + " -q");
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out == read_file(kFixtures + "/expected/" + name + ".txt"));
    ++n;
  }
  CHECK(n >= 20);
}

TEST_CASE("hypotheses come from stdin: CR, trailing spaces and a BOM are read as sacreBLEU reads them", "[metrics][cli]") {
  auto from_file = bleu("ref1.txt -i hyp.txt -m bleu chrf -w 4 -f text");
  std::string hyp = read_file(kFixtures + "/hyp.txt");
  auto from_stdin = bleu("ref1.txt -m bleu chrf -w 4 -f text", hyp);
  CHECK(from_stdin.status == 0);
  CHECK(from_stdin.out == from_file.out);
  // CRLF line ends and trailing blanks are stripped (rstrip); the BOM of line 1 stays part of the text
  std::string crlf;
  std::istringstream in(hyp);
  for (std::string l; std::getline(in, l);) crlf += l + " \t\r\n";
  CHECK(bleu("ref1.txt -m bleu chrf -w 4 -f text", crlf).out == from_file.out);
  auto no_bom = bleu("ref1.txt -m bleu -w 4 -b", hyp.substr(3));
  CHECK(no_bom.out != bleu("ref1.txt -m bleu -w 4 -b", hyp).out);
}

TEST_CASE("sentence level with -f json prints one JSON object per line", "[metrics][cli]") {
  auto r = bleu("ref1.txt ref2.txt -i hyp.txt --sentence-level -f json -w 4");
  REQUIRE(r.status == 0);
  std::istringstream out(r.out);
  int lines = 0;
  for (std::string l; std::getline(out, l); ++lines) {
    CHECK(l.front() == '{');
    CHECK(contains(l, "\"eff\":\"yes\""));
  }
  CHECK(lines == 20);
}

TEST_CASE("empty corpus scores zero", "[metrics][cli]") {
  tt::test::TmpDir dir;
  std::string ref = dir.write("ref", "");
  auto r = run_command(tt::test::quoted(tool("tt-bleu")).append(" ").append(tt::test::quoted(ref)).append(" -m bleu chrf ter -b -f text"));
  CHECK(r.status == 0);
  CHECK(r.out == "0.0\n0.0\n0.0\n");
}

TEST_CASE("paired tests name the baseline and print seed and sample count", "[metrics][cli]") {
  auto r = bleu("ref1.txt -i hyp.txt hyp2.txt --paired-ar --paired-ar-n 200 -m bleu chrf -f text");
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "Baseline: hyp.txt"));
  CHECK(contains(r.out, "Paired approximate randomization test with 200 trials"));
  CHECK(contains(r.out, "nrefs:1|ar:200|seed:12345|case:mixed"));
  CHECK(contains(r.out, "(p = "));
  auto bs = bleu("ref1.txt -i hyp.txt hyp2.txt --paired-bs --paired-bs-n 100 --seed 3 -m ter -f json");
  REQUIRE(bs.status == 0);
  CHECK(contains(bs.out, "\"system\": \"Baseline: hyp.txt\""));
  CHECK(contains(bs.out, "\"p_value\": null"));
  CHECK(contains(bs.out, "\"mean\": "));
}

TEST_CASE("bad input: one clear message and a non-zero exit", "[metrics][cli]") {
  tt::test::TmpDir dir;
  std::string short_hyp = dir.write("short.txt", "one line\n");
  auto r = bleu("ref1.txt ref2.txt -i '" + short_hyp + "'");
  CHECK(r.status == 1);
  CHECK(contains(r.err, "short.txt has 1 lines"));
  CHECK(contains(r.err, "ref1.txt has 20"));

  r = bleu("no-such-ref.txt -i hyp.txt");
  CHECK(r.status == 1);
  CHECK(contains(r.err, "no-such-ref.txt"));

  std::string bad = dir.write("bad.txt", "fine\nbad \xff byte\n");
  r = run_command(tt::test::quoted(tool("tt-bleu")).append(" ").append(tt::test::quoted(bad)).append(" -i ").append(tt::test::quoted(bad)));
  CHECK(r.status == 1);
  CHECK(contains(r.err, "bad.txt:2: invalid UTF-8"));

  r = bleu("ref1.txt -i hyp.txt -tok moses");
  CHECK(r.status == 2);
  CHECK(contains(r.err, "13a,intl,zh,char,none"));

  r = bleu("ref1.txt -i hyp.txt hyp2.txt --sentence-level");  // contradictory flags: a usage error
  CHECK(r.status == 2);
  CHECK(contains(r.err, "tt-bleu: error: --sentence-level takes one system"));
}

TEST_CASE("help and version: exit 0 and print to stdout", "[metrics][cli]") {
  auto help = run_command(tt::test::quoted(tool("tt-bleu")).append(" --help"));
  CHECK(help.status == 0);
  CHECK(contains(help.out, "--chrf-word-order"));
  auto version = run_command(tt::test::quoted(tool("tt-bleu")).append(" --version"));
  CHECK(version.status == 0);
  CHECK(contains(version.out, "tt-bleu"));
}

TEST_CASE("resample counts below 1 are usage errors (exit 2) naming the flag", "[metrics][cli]") {
  for (const std::string flags : {"--paired-bs --paired-bs-n 0", "--paired-bs -pbsn -3", "--paired-ar --paired-ar-n 0",
                                  "--paired-ar -parn -1"}) {
    INFO(flags);
    auto r = bleu("ref1.txt -i hyp.txt hyp2.txt " + flags);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(contains(r.err, flags.find("bs") != std::string::npos ? "--paired-bs-n" : "--paired-ar-n"));
  }
  for (const std::string flags : {"--confidence --confidence-n 0", "-ci -cin -7"}) {
    INFO(flags);
    auto r = bleu("ref1.txt -i hyp.txt " + flags);
    CHECK(r.status == 2);
    CHECK(contains(r.err, "--confidence-n"));
  }
  auto one = bleu("ref1.txt -i hyp.txt hyp2.txt --paired-bs --paired-bs-n 1 -f text");
  CHECK(one.status == 0);
  CHECK(contains(one.out, "Baseline: hyp.txt"));
}

TEST_CASE("sacreBLEU flags: a malformed pair, another encoding and flag clashes are usage errors", "[metrics][cli]") {
  struct Case {
    const char* args;
    const char* message;
  };
  for (const Case c : {Case{"ref1.txt -i hyp.txt -l en", "--language-pair: expected SRC-TGT"},
                       Case{"ref1.txt -i hyp.txt -e latin1", "tt-bleu reads UTF-8 only, got 'latin1'"},
                       Case{"ref1.txt ref2.txt -i hyp.txt -nr 2", "--num-refs N takes exactly one reference file"},
                       Case{"ref1.txt -i hyp.txt -m chrf -cw -6", "chrF needs char order + word order >= 1"},
                       Case{"ref1.txt -i hyp.txt -l en-ja", "ja-mecab tokenizer"},
                       Case{"ref1.txt -i hyp.txt --paired-bs", "paired tests need two or more systems"},
                       Case{"ref1.txt -i hyp.txt hyp2.txt --paired-bs --paired-ar", "mutually exclusive"},
                       Case{"ref1.txt -i hyp.txt hyp2.txt --confidence", "use --paired-bs or --paired-ar"},
                       Case{"ref1.txt -i hyp.txt -sh -nc -f latex", "--format: latex not in {json,text}"}}) {
    INFO(c.args);
    auto r = bleu(c.args);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(contains(r.err, std::string("tt-bleu: error: ")));
    CHECK(contains(r.err, c.message));
  }
  // -l picks the target as sacreBLEU does: the second field of the pair ("en-zh-tw" -> zh).
  CHECK(bleu("ref1.txt -i hyp.txt -l en-zh-tw -b -w 4").out == bleu("ref1.txt -i hyp.txt -tok zh -b -w 4").out);
  CHECK(bleu("ref1.txt -i hyp.txt -l de-en -b -w 4").out == bleu("ref1.txt -i hyp.txt -tok 13a -b -w 4").out);
  // -sh is --short, not -s h (a smoothing method "h" would be a usage error).
  CHECK(bleu("ref1.txt -i hyp.txt -sh -f text").status == 0);
}

TEST_CASE("num-refs: one reference file split on TABs scores as two reference files", "[metrics][cli]") {
  const std::string two_files = bleu("ref2.txt ref1.txt -i hyp.txt -m bleu chrf ter -w 4 -f text").out;
  CHECK(bleu("refs_tab.txt -i hyp.txt -nr 2 -m bleu chrf ter -w 4 -f text").out == two_files);
  tt::test::TmpDir dir;
  std::string ragged = dir.write("ragged.tsv", "a\tb\nonly one\n");
  auto r = run_command(tt::test::quoted(tool("tt-bleu")).append(" ").append(tt::test::quoted(ragged)).append(" -nr 2"),
                       "x\ny\n");
  CHECK(r.status == 1);  // the file's content is wrong, not the flags
  CHECK(contains(r.err, "ragged.tsv:2: expected 2 TAB-separated references, found 1"));
}

TEST_CASE("threads: validated like every tool's (0..256) and scores do not depend on it", "[metrics][cli]") {
  auto r = bleu("ref1.txt -i hyp.txt --threads 100000");
  CHECK(r.status == 2);
  CHECK(contains(r.err, "--threads"));
  CHECK(bleu("ref1.txt -i hyp.txt --threads -1").status == 2);
  const std::string one = bleu("ref1.txt -i hyp.txt -m bleu chrf ter --threads 1 -b -w 6").out;
  CHECK(bleu("ref1.txt -i hyp.txt -m bleu chrf ter --threads 0 -b -w 6").out == one);
  CHECK(bleu("ref1.txt -i hyp.txt -m bleu chrf ter --threads 3 -b -w 6").out == one);
}
