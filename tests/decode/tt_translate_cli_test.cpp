// tt-translate as a user runs it: pipes, batch-size invariance of the output bytes, formats, errors.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "data/spm_tokenizer.h"
#include "decode/trained_fixture.h"
#include "support/ids_text.h"
#include "support/run_command.h"

using namespace tt;
using test::quoted;
using test::run_command;
using test::tool;

namespace {

std::string translate_cmd(const std::string& flags, int threads = 1) {
  return tool("tt-translate") + " -m " + quoted(test::trained_fixture().model_dir) + " --threads " +
         std::to_string(threads) + " --max-len-b 5 " + flags;
}

std::string fixture_input(size_t n) {
  std::string in;
  const auto& lines = test::trained_fixture().lines;
  for (size_t i = 0; i < n && i < lines.size(); ++i) in += lines[i] + "\n";
  return in;
}

size_t count_lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST_CASE("tt-translate: line per line, empty lines kept, same bytes for any batch size", "[decode][cli]") {
  std::string in = fixture_input(30);
  const size_t cut = in.find('\n') + 1;  // an empty second line (append: GCC 12 -Wrestrict false positive)
  std::string with_empty = in.substr(0, cut);
  with_empty.append(1, '\n').append(in, cut, std::string::npos);
  in = with_empty;
  auto a = run_command(translate_cmd("--batch-size 1"), in);
  REQUIRE(a.status == 0);
  CHECK(count_lines(a.out) == count_lines(in));
  std::istringstream lines(a.out);
  std::string first, second;
  std::getline(lines, first);
  std::getline(lines, second);
  CHECK(second.empty());
  CHECK(a.err.find("beam 4") != std::string::npos);  // the header names what runs
  CHECK(a.err.find("1 thread") != std::string::npos);
  auto b = run_command(translate_cmd("--batch-size 7 --window 2 -q"), in);
  REQUIRE(b.status == 0);
  CHECK(b.out == a.out);
  CHECK(b.err.empty());
  auto c = run_command(translate_cmd("--batch-tokens 40", 2), in);
  CHECK(c.status == 0);
  CHECK(c.out == a.out);
  auto d = run_command(translate_cmd("--flush"), in);
  CHECK(d.out == a.out);
}

TEST_CASE("tt-translate: n-best in Moses format, scores, ids, alignments", "[decode][cli]") {
  const std::string in = fixture_input(3);
  auto r = run_command(translate_cmd("--beam 3 --nbest 3 -q"), in);
  REQUIRE(r.status == 0);
  CHECK(count_lines(r.out) == 9);
  const std::regex moses(R"((\d+) \|\|\| [^\n]* \|\|\| (-?[0-9.]+))");
  std::istringstream lines(r.out);
  std::string line;
  int n = 0;
  double previous = 0;
  while (std::getline(lines, line)) {
    std::smatch m;
    REQUIRE(std::regex_match(line, m, moses));
    CHECK(std::stoi(m[1]) == n / 3);
    const double score = std::stod(m[2]);
    if (n % 3) CHECK(score <= previous);  // best first
    previous = score;
    ++n;
  }
  auto s = run_command(translate_cmd("-q --scores"), in);
  CHECK(count_lines(s.err) == 3);
  auto ids = run_command(translate_cmd("-q --output-format ids"), in);
  CHECK(std::regex_match(ids.out, std::regex(R"(([0-9]+( [0-9]+)*)?\n(([0-9]+( [0-9]+)*)?\n){2})")));
  // ids in give what text in gives
  auto spm = data::SpmTokenizer::load(test::trained_fixture().model_dir + "/spm.model");
  std::string id_lines;
  for (const auto& l : test::trained_fixture().lines) {
    if (id_lines.size() > 0 && std::count(id_lines.begin(), id_lines.end(), '\n') == 3) break;
    for (int id : spm.encode_ids(l)) id_lines.append(std::to_string(id)).append(1, ' ');
    id_lines.append(1, '\n');
  }
  auto from_ids = run_command(translate_cmd("-q --input-format ids --output-format ids"), id_lines);
  CHECK(from_ids.status == 0);
  CHECK(from_ids.out == ids.out);
  auto hard = run_command(translate_cmd("-q --alignment hard"), in);
  CHECK(std::regex_search(hard.out, std::regex(R"(\|\|\| [0-9]+-0( [0-9]+-[0-9]+)*\n)")));
  auto soft = run_command(translate_cmd("-q --alignment soft"), "a b\n");
  CHECK(std::regex_match(soft.out, std::regex(R"([^|]* \|\|\| [0-9.e-]+(,[0-9.e-]+)*( [0-9.e-]+(,[0-9.e-]+)*)*\n)")));
}

TEST_CASE("tt-translate --workers: batches searched at once, the same bytes as one worker", "[decode][cli][workers]") {
  const std::string in = fixture_input(60);
  auto one = run_command(translate_cmd("--batch-size 4 --workers 1", 2), in);
  REQUIRE(one.status == 0);
  CHECK(one.err.find("workers") == std::string::npos);
  auto two = run_command(translate_cmd("--batch-size 4 --workers 2", 2), in);
  REQUIRE(two.status == 0);
  CHECK(two.err.find("2 workers of cpu (oneDNN, 1 thread") != std::string::npos);
  CHECK(two.out == one.out);
  auto scores_one = run_command(translate_cmd("--batch-size 3 --nbest 2 --workers 1 -q", 2), in);
  auto scores_two = run_command(translate_cmd("--batch-size 3 --nbest 2 --workers 2 -q", 2), in);
  CHECK(scores_two.status == 0);
  CHECK(scores_two.out == scores_one.out);
  // The fixture model is small (d_model <= 256): by default, one worker per thread.
  auto automatic = run_command(translate_cmd("--batch-size 4", 2), in);
  CHECK(automatic.err.find("2 workers") != std::string::npos);
  CHECK(automatic.out == one.out);
  auto too_many = run_command(translate_cmd("--workers 3", 2), "x\n");
  CHECK(too_many.status == 2);  // a usage error (man 7 tt)
  CHECK(too_many.err.find("--workers 3 exceeds --threads 2") != std::string::npos);
  CHECK(run_command(translate_cmd("--workers -1"), "x\n").status == 2);
}

TEST_CASE("tt-translate --sampling: the same samples for any batch size, threads or workers", "[decode][cli][sampling]") {
  const std::string in = fixture_input(40);
  auto a = run_command(translate_cmd("--sampling topk:5 --temperature 1.5 --seed 7 --batch-size 1 -q"), in);
  REQUIRE(a.status == 0);
  CHECK(count_lines(a.out) == count_lines(in));
  auto b = run_command(translate_cmd("--sampling topk:5 --temperature 1.5 --seed 7 --batch-size 7 --workers 2 -q", 2), in);
  CHECK(b.out == a.out);
  auto greedy = run_command(translate_cmd("--beam 1 -q"), in);
  CHECK(a.out != greedy.out);  // it really samples
  auto other = run_command(translate_cmd("--sampling topk:5 --temperature 1.5 --seed 8 -q"), in);
  CHECK(other.out != a.out);
  auto full = run_command(translate_cmd("--sampling full --seed 7 --beam 3 --nbest 3 -q"), in);
  CHECK(full.status == 0);
  CHECK(count_lines(full.out) == 3 * count_lines(in));
  auto header = run_command(translate_cmd("--sampling topk:5 --beam 2"), "x\n");
  CHECK(header.err.find("sampling topk:5 (temperature 1), 2 samples per line") != std::string::npos);
  CHECK(run_command(translate_cmd("--sampling topk:5 --full-beam"), "x\n").status == 2);  // usage errors
  auto bad = run_command(translate_cmd("--sampling top5"), "x\n");
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--sampling 'top5'") != std::string::npos);
  CHECK(run_command(translate_cmd("--sampling topk:0"), "x\n").status == 2);
  CHECK(run_command(translate_cmd("--sampling topk:3 --temperature 0"), "x\n").status == 2);
}

TEST_CASE("tt-translate: pipes and errors", "[decode][cli]") {
  const std::string in = fixture_input(200);
  auto head = run_command(translate_cmd("-q --batch-size 2 --window 1") + " | head -1", in);
  CHECK(head.status == 0);
  CHECK(count_lines(head.out) == 1);
  CHECK(head.err.empty());  // EPIPE is quiet

  auto missing = run_command(tool("tt-translate") + " -m /nonexistent/model", "x\n");
  CHECK(missing.status == 1);
  CHECK(missing.err.find("/nonexistent/model") != std::string::npos);
  CHECK(run_command(translate_cmd("--beam 0"), "x\n").status == 2);
  CHECK(run_command(translate_cmd("--no-such-flag"), "x\n").status == 2);
  auto nbest = run_command(translate_cmd("--beam 2 --nbest 3"), "x\n");
  CHECK(nbest.status == 2);
  CHECK(nbest.err.find("--nbest 3") != std::string::npos);

  const std::string bad = "good line\nbad \xff line\n";
  auto invalid = run_command(translate_cmd(""), bad);
  CHECK(invalid.status == 1);
  CHECK(invalid.err.find("<stdin>:2") != std::string::npos);
  CHECK(invalid.err.find("--skip-invalid") != std::string::npos);
  auto skipped = run_command(translate_cmd("--skip-invalid"), bad);
  CHECK(skipped.status == 0);
  CHECK(count_lines(skipped.out) == 2);
  CHECK(skipped.out.substr(skipped.out.size() - 2) == "\n\n");
  CHECK(skipped.err.find("<stdin>:2") != std::string::npos);

  // Longer than --max-src-len: translated in parts, not truncated (the "never cut" test has the details).
  auto parts = run_command(translate_cmd("--max-src-len 3"), "a\nA man in a blue shirt is standing on a ladder.\n");
  CHECK(parts.status == 0);
  CHECK(count_lines(parts.out) == 2);
  CHECK(parts.err.find("truncated") == std::string::npos);
  auto ids = run_command(translate_cmd("--input-format ids"), "4 5 99999\n");
  CHECK(ids.status == 1);
  CHECK(ids.err.find("<stdin>:1") != std::string::npos);
}

TEST_CASE("tt-translate: a line longer than --max-src-len is translated in parts and rejoined, never cut",
          "[decode][cli]") {
  const auto& lines = test::trained_fixture().lines;
  const auto spm = data::SpmTokenizer::load(test::trained_fixture().model_dir + "/spm.model");
  // Three sentences, each short enough alone, no two together.
  std::vector<std::string> sentences;
  size_t longest = 0;
  for (size_t i = 0; sentences.size() < 3 && i < lines.size(); ++i) {
    if (lines[i].find_first_of(".!?") != std::string::npos || lines[i].size() < 20) continue;
    sentences.push_back(lines[i] + ".");
    longest = std::max(longest, spm.encode_ids(sentences.back()).size());
  }
  REQUIRE(sentences.size() == 3);
  for (const auto& s : sentences) REQUIRE(2 * spm.encode_ids(s).size() > longest);
  const std::string limit = " --max-src-len " + std::to_string(longest) + " ";
  const std::string line = sentences[0] + " " + sentences[1] + " " + sentences[2];

  // The parts' ids, in order, are the sentences' translations one after the other.
  std::string expected;
  for (const auto& s : sentences) {
    auto r = run_command(translate_cmd("-q --output-format ids"), s + "\n");
    REQUIRE(r.status == 0);
    std::string ids = r.out.substr(0, r.out.size() - 1);
    if (!ids.empty()) expected += (expected.empty() ? "" : " ") + ids;
  }
  auto joined = run_command(translate_cmd("--output-format ids" + limit), line + "\n");
  REQUIRE(joined.status == 0);
  CHECK(joined.out == expected + "\n");
  CHECK(joined.err.find("truncated") == std::string::npos);

  // Scores: with --length-penalty none, the line's log-probability is the sum of its parts'.
  double sum = 0;
  for (const auto& s : sentences) {
    auto r = run_command(translate_cmd("-q --length-penalty none --scores-file /dev/stderr"), s + "\n");
    sum += std::stod(r.err);
  }
  auto scored = run_command(translate_cmd("-q --length-penalty none --scores-file /dev/stderr" + limit), line + "\n");
  CHECK(std::stod(scored.err) == Approx(sum).margin(1e-4));

  // n-best: N entries for the line, the first one the best joined translation.
  auto nbest = run_command(translate_cmd("-q --output-format ids --nbest 2" + limit), line + "\n");
  REQUIRE(count_lines(nbest.out) == 2);
  CHECK(nbest.out.rfind("0 ||| " + expected + " ||| ", 0) == 0);

  // 2,000 words with and without sentence ends, between short lines: one line out for each line in, the
  // same bytes for any batch size and worker count.
  std::string words, sentences_text;
  for (int i = 0; i < 2000; ++i) {
    words += lines[static_cast<size_t>(i) % lines.size()].substr(0, lines[static_cast<size_t>(i) % lines.size()].find(' ')) + " ";
    sentences_text += (i % 12 == 11) ? "end. " : "word ";
  }
  const std::string in = lines[0] + "\n" + words + "\n" + lines[1] + "\n" + sentences_text + "\n";
  auto one = run_command(translate_cmd("--batch-size 1 --output-format ids"), in);
  REQUIRE(one.status == 0);
  CHECK(count_lines(one.out) == 4);
  CHECK(one.err.find("truncated") == std::string::npos);
  auto many = run_command(translate_cmd("-q --batch-size 64 --output-format ids", 2), in);
  CHECK(many.out == one.out);
}

TEST_CASE("tt-translate --score: the search's own output scores as the search scored it, n-best lists too",
          "[decode][cli]") {
  test::TmpDir tmp;
  const auto spm = data::SpmTokenizer::load(test::trained_fixture().model_dir + "/spm.model");
  std::string pieces;  // sources as pieces, so that the targets are read back as the very ids searched
  for (size_t i = 0; i < 40; ++i) {
    std::string line;
    for (const auto& p : spm.encode_pieces(test::trained_fixture().lines[i])) line += (line.empty() ? "" : " ") + p;
    pieces += line + "\n";
  }
  const std::string pieces_flags = " -q --input-format pieces --output-format pieces ";
  const std::string model = test::trained_fixture().model_dir;
  for (const std::string penalty : {"none", "gnmt"}) {
    const std::string lp = " --length-penalty " + penalty;
    auto search = run_command(translate_cmd(pieces_flags + lp + " --scores-file " + tmp.file("s")), pieces);
    REQUIRE(search.status == 0);
    tmp.write("hyps", search.out);
    auto scored = run_command(translate_cmd(pieces_flags + lp + " --score " + tmp.file("hyps")), pieces);
    REQUIRE(scored.status == 0);
    std::istringstream scores(test::read_file(tmp.file("s"))), lines(scored.out);
    std::string expected, log_prob, score;
    size_t n = 0;
    for (; scores >> expected && lines >> log_prob >> score; ++n) {
      CHECK(score == expected);
      if (penalty == "none") CHECK(log_prob == expected);
    }
    CHECK(n == 40);
    auto batch1 = run_command(translate_cmd(pieces_flags + lp + " --batch-size 1 --score " + tmp.file("hyps")), pieces);
    auto batch64 = run_command(translate_cmd(pieces_flags + lp + " --batch-size 64 --score " + tmp.file("hyps"), 2), pieces);
    CHECK(batch1.out == scored.out);
    CHECK(batch64.out == scored.out);
  }
  // Per-token log-probabilities sum to the total (</s> last).
  auto tokens = run_command(translate_cmd(pieces_flags + "--length-penalty none --token-scores --score " + tmp.file("hyps")), pieces);
  std::istringstream first(tokens.out.substr(0, tokens.out.find('\n')));
  double total = 0, score = 0, sum = 0;
  std::string bars;
  first >> total >> score >> bars;
  CHECK(bars == "|||");
  for (double x; first >> x;) sum += x;
  CHECK(sum == Approx(total).margin(1e-4));

  // A Moses n-best list, scored by an ensemble of the model with itself: each line gets its own score back.
  auto nbest = run_command(tool("tt-translate") + " -m " + quoted(model) + " " + quoted(model) +
                               " --threads 1 --max-len-b 5 --beam 3 --nbest 3" + pieces_flags, pieces);
  REQUIRE(nbest.status == 0);
  tmp.write("nbest", nbest.out);
  auto rescored = run_command(tool("tt-translate") + " -m " + quoted(model) + " " + quoted(model) +
                                  " --threads 1 --score-feature ens=" + pieces_flags + "--score " + tmp.file("nbest"),
                              pieces);
  REQUIRE(rescored.status == 0);
  std::istringstream in(nbest.out), out(rescored.out);
  size_t entries = 0;
  for (std::string a, b; std::getline(in, a) && std::getline(out, b); ++entries) {
    const std::string own = a.substr(a.rfind(" ||| ") + 5);
    CHECK(b == a + " ens= " + own);
  }
  CHECK(entries == 120);

  // Misuse: usage errors before any model is read; a target line missing is an error naming the files.
  CHECK(run_command(translate_cmd("--score x --nbest 2 --beam 2"), "a\n").status == 2);
  CHECK(run_command(translate_cmd("--token-scores"), "a\n").status == 2);
  tmp.write("one", "a\n");
  auto fewer = run_command(translate_cmd("-q --score " + tmp.file("one")), "a\nb\n");
  CHECK(fewer.status == 1);
  CHECK(fewer.err.find(tmp.file("one")) != std::string::npos);
}

TEST_CASE("tt-translate --target-prefix and --alternatives: each translation starts with its prefix, in one pass",
          "[decode][cli]") {
  test::TmpDir tmp;
  const std::string in = fixture_input(30);
  const std::string ids = " -q --output-format ids ";
  auto plain = run_command(translate_cmd(ids), in);
  REQUIRE(plain.status == 0);
  // Prefixes: the first two ids of every other line's own translation, as ids (the input format).
  const std::string id_flags = " -q --input-format ids --output-format ids ";
  const auto spm = data::SpmTokenizer::load(test::trained_fixture().model_dir + "/spm.model");
  std::string id_in, prefixes;
  std::istringstream translations(plain.out), lines(in);
  std::vector<std::string> wanted;
  for (std::string t, l; std::getline(translations, t) && std::getline(lines, l);) {
    id_in += tt::test::ids_text(spm.encode_ids(l)) + "\n";
    std::istringstream words(t);
    std::string a, b, prefix;
    if (wanted.size() % 2 == 0 && words >> a >> b) prefix = a + " " + b;
    wanted.push_back(prefix);
    prefixes += prefix + "\n";
  }
  tmp.write("prefixes", prefixes);
  auto forced = run_command(translate_cmd(id_flags + "--target-prefix " + tmp.file("prefixes")), id_in);
  REQUIRE(forced.status == 0);
  std::istringstream out(forced.out);
  size_t n = 0;
  for (std::string line; std::getline(out, line); ++n) CHECK(line.rfind(wanted[n], 0) == 0);
  CHECK(n == 30);
  // The same bytes for any batch size and worker count; lines without a prefix as without the option.
  auto batch1 = run_command(translate_cmd(id_flags + "--batch-size 1 --target-prefix " + tmp.file("prefixes")), id_in);
  auto workers = run_command(translate_cmd(id_flags + "--batch-size 4 --workers 2 --target-prefix " + tmp.file("prefixes"), 2), id_in);
  CHECK(batch1.out == forced.out);
  CHECK(workers.out == forced.out);
  auto unforced = run_command(translate_cmd(id_flags), id_in);
  std::istringstream a(forced.out), b(unforced.out);
  n = 0;
  for (std::string x, y; std::getline(a, x) && std::getline(b, y); ++n)
    if (wanted[n].empty()) CHECK(x == y);

  // Alternatives: N n-best lines per input line, distinct, each after the prefix.
  auto alternatives = run_command(translate_cmd(id_flags + "--alternatives 3 --target-prefix " + tmp.file("prefixes")), id_in);
  REQUIRE(alternatives.status == 0);
  std::istringstream alt(alternatives.out);
  std::map<size_t, std::set<std::string>> per_line;
  const std::regex entry(R"((\d+) \|\|\| (.*) \|\|\| (-?[0-9.]+))");
  for (std::string line; std::getline(alt, line);) {
    std::smatch m;
    REQUIRE(std::regex_match(line, m, entry));
    const size_t k = std::stoul(m[1]);
    CHECK(m[2].str().rfind(wanted[k], 0) == 0);
    CHECK(per_line[k].insert(m[2].str()).second);  // distinct
  }
  CHECK(per_line.size() == 30);
  for (const auto& [k, set] : per_line) CHECK(set.size() == 3);

  // A prefix file with fewer or more lines than the input, and misuse.
  tmp.write("short", "1\n");
  auto fewer = run_command(translate_cmd("-q --target-prefix " + tmp.file("short")), "a\nb\n");
  CHECK(fewer.status == 1);
  CHECK(fewer.err.find(tmp.file("short")) != std::string::npos);
  auto more = run_command(translate_cmd("-q --target-prefix " + tmp.file("prefixes")), "a\nb\n");
  CHECK(more.status == 1);
  CHECK(more.err.find("more lines") != std::string::npos);
  CHECK(run_command(translate_cmd("--score x --target-prefix y"), "a\n").status == 2);
  CHECK(run_command(translate_cmd("--alternatives 2 --nbest 2 --beam 2"), "a\n").status == 2);
  CHECK(run_command(translate_cmd("--repetition-penalty 0"), "a\n").status == 2);
  CHECK(run_command(translate_cmd("--repetition-penalty nan"), "a\n").status == 2);
}

TEST_CASE("tt-translate --constraints: every phrase in every output, the same bytes for any batch or worker count",
          "[decode][cli][constraints]") {
  test::TmpDir tmp;
  const std::string in = fixture_input(40);
  const std::string ids = " -q --input-format ids --output-format ids ";
  const auto spm = data::SpmTokenizer::load(test::trained_fixture().model_dir + "/spm.model");
  std::string id_in, constraints;
  std::istringstream lines(in);
  std::vector<std::vector<std::string>> wanted;
  for (std::string l; std::getline(lines, l);) {
    const auto v = spm.encode_ids(l);
    id_in += tt::test::ids_text(v) + "\n";
    // Every third line: no constraints; the others: two phrases of ids from the line's own source (the
    // fixture model copies), the second in reverse order, which it would not write by itself.
    std::vector<std::string> phrases;
    if (wanted.size() % 3 != 0 && v.size() >= 2) {
      phrases.push_back(std::to_string(v[0]));
      phrases.push_back(std::to_string(v[v.size() - 1]) + " " + std::to_string(v[v.size() - 2]));
    }
    std::string line;
    for (const auto& p : phrases) line += (line.empty() ? "" : "\t") + p;
    constraints += line + "\n";
    wanted.push_back(phrases);
  }
  tmp.write("constraints", constraints);
  const std::string flags = ids + "--beam 4 --nbest 2 --constraints " + tmp.file("constraints");
  auto got = run_command(translate_cmd(flags), id_in);
  REQUIRE(got.status == 0);
  auto batch1 = run_command(translate_cmd(flags + " --batch-size 1"), id_in);
  auto workers = run_command(translate_cmd(flags + " --batch-size 5 --workers 2", 2), id_in);
  CHECK(batch1.out == got.out);
  CHECK(workers.out == got.out);
  auto plain = run_command(translate_cmd(ids + "--beam 4 --nbest 2"), id_in);
  // Each n-best entry holds its line's phrases (as ids, space-separated, inside " ... "); lines without
  // constraints are as without the option.
  std::istringstream out(got.out), unconstrained(plain.out);
  const std::regex entry(R"((\d+) \|\|\| (.*) \|\|\| (-?[0-9.]+))");
  size_t entries = 0;
  for (std::string line, free; std::getline(out, line) && std::getline(unconstrained, free); ++entries) {
    std::smatch m;
    REQUIRE(std::regex_match(line, m, entry));
    const size_t k = std::stoul(m[1]);
    const std::string text = std::string(" ").append(m[2].str()).append(" ");
    for (const auto& p : wanted[k]) CHECK(text.find(" " + p + " ") != std::string::npos);
    if (wanted[k].empty()) CHECK(line == free);
  }
  CHECK(entries == 80);
  // A phrase that cannot fit (the length limit is 5 pieces after the source's): a warning naming the file
  // and line, the line still translated.
  tmp.write("long", "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30\n");
  auto warned = run_command(translate_cmd("--input-format ids --output-format ids --constraints " + tmp.file("long")), "5 6\n");
  CHECK(warned.status == 0);
  CHECK(count_lines(warned.out) == 1);
  CHECK(warned.err.find(tmp.file("long") + ":1") != std::string::npos);
  // Errors name the file and line: fewer lines than the input, invalid UTF-8; misuse is a usage error.
  auto fewer = run_command(translate_cmd("-q --constraints " + tmp.file("long")), "a\nb\n");
  CHECK(fewer.status == 1);
  CHECK(fewer.err.find(tmp.file("long")) != std::string::npos);
  tmp.write("bad", "ok\n\xff\xfe\n");
  auto bad = run_command(translate_cmd("-q --constraints " + tmp.file("bad")), "a\nb\n");
  CHECK(bad.status == 1);
  CHECK(bad.err.find(tmp.file("bad") + ":2") != std::string::npos);
  auto missing = run_command(translate_cmd("-q --constraints " + tmp.file("none")), "a\n");
  CHECK(missing.status == 1);
  CHECK(missing.err.find(tmp.file("none")) != std::string::npos);
  CHECK(missing.out.empty());
  CHECK(run_command(translate_cmd("--constraints x --sampling topk:3"), "a\n").status == 2);
  CHECK(run_command(translate_cmd("--constraints x --full-beam"), "a\n").status == 2);
  CHECK(run_command(translate_cmd("--constraints x --score y"), "a\n").status == 2);
}

TEST_CASE("tt-convert shortlist and tt-translate --shortlist: a shortlist of the model's own corpus, the "
          "same bytes where it keeps every piece; another model's sizes refused, naming the file",
          "[decode][cli][shortlist]") {
  test::TmpDir dir;
  const std::string model = test::trained_fixture().model_dir;
  const std::string in = fixture_input(40);
  const std::string corpus = dir.write("corpus.txt", in);
  const std::string list = dir.file("sl.txt");
  auto made = run_command(tool("tt-convert") + " shortlist " + quoted(model) + " --train " + quoted(corpus) + " " +
                          quoted(corpus) + " -o " + quoted(list));
  REQUIRE(made.status == 0);
  CHECK(made.err.find("40 sentence pairs") != std::string::npos);
  // Again without --force: refused, the file kept.
  auto again = run_command(tool("tt-convert") + " shortlist " + quoted(model) + " --train " + quoted(corpus) + " " +
                           quoted(corpus) + " -o " + quoted(list));
  CHECK(again.status == 2);
  CHECK(again.err.find("--force") != std::string::npos);
  // The fixture's 200 pieces are fewer than a batch keeps (the rounding and the sample of the rest): every
  // column is there, so the output is the model's, byte for byte, for any batch size and worker count.
  const auto plain = run_command(translate_cmd("-q"), in);
  REQUIRE(plain.status == 0);
  for (const std::string flags : {"--batch-size 3", "--batch-size 16 --workers 2"}) {
    INFO(flags);
    const auto listed = run_command(translate_cmd("--shortlist " + quoted(list) + " " + flags, 2), in);
    REQUIRE(listed.status == 0);
    CHECK(listed.out == plain.out);
    CHECK(listed.err.find("shortlist " + list) != std::string::npos);
  }
  const auto scored = run_command(translate_cmd("--shortlist " + quoted(list) + " --score " + quoted(corpus)), in);
  CHECK(scored.status == 2);
  CHECK(scored.err.find("--shortlist") != std::string::npos);
  const std::string other = dir.write("other.txt", "tt-shortlist 1\nsource_vocab 3 target_vocab 5 frequent 2 best 2\n"
                                                   "3 1 0 2 4\n1 2\n\n4\n");
  const auto wrong = run_command(translate_cmd("--shortlist " + quoted(other)), in);
  CHECK(wrong.status == 1);
  CHECK(wrong.err.find(other) != std::string::npos);
  CHECK(wrong.err.find("3 / 5 pieces") != std::string::npos);
  CHECK(wrong.out.empty());
}
