// tt-tokenize as a user runs it: the real binary through a shell, stdin to stdout.
#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>

#include "data/spm_fixture.h"
#include "data/spm_tokenizer.h"
#include "support/run_command.h"
#include "support/tmp_dir.h"
#include "util/text_io.h"

using tt::test::run_command;
using tt::test::TmpDir;

namespace {

const std::string tok = tt::test::tool("tt-tokenize");

std::string fixture_text() { return tt::test::read_file(tt::test::fixture_path("corpus.en")); }

// Trains through the CLI and returns PREFIX.model.
std::string cli_train(const TmpDir& dir, const std::string& extra = "") {
  auto r = run_command(tok + " train --input " + tt::test::fixture_path("corpus.en") + " " +
                       tt::test::fixture_path("corpus.de") + " --model-prefix " + dir.file("m") +
                       " --vocab-size 200 --character-coverage 1.0 --threads 1 " + extra);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.empty());
  CHECK(r.err.empty());  // quiet by default when stderr is not a terminal
  return dir.file("m.model");
}

size_t count_lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST_CASE("cli: encode | decode through a pipe round-trips text, as pieces and as ids", "[cli]") {
  TmpDir dir;
  auto model = cli_train(dir);
  const std::string text = fixture_text();
  for (const char* format : {"piece", "id"}) {
    INFO(format);
    auto r = run_command(tok + " encode -m " + model + " --format " + format + " | " + tok + " decode -m " + model +
                             " --format " + format,
                         text);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out == text);
  }
}

TEST_CASE("cli: encode output matches the library, one line out per line in, empty lines kept", "[cli]") {
  TmpDir dir;
  auto model = cli_train(dir);
  auto tokenizer = tt::data::SpmTokenizer::load(model);
  auto r = run_command(tok + " encode -m " + model + " --format id", "Two dogs.\n\nA man is painting.\n");
  REQUIRE(r.status == 0);
  std::string expected;
  for (const char* line : {"Two dogs.", "", "A man is painting."}) {
    auto ids = tokenizer.encode_ids(line);
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i) expected += ' ';
      expected += std::to_string(ids[i]);
    }
    expected += "\n";
  }
  CHECK(r.out == expected);
  CHECK(run_command(tok + " encode -m " + model, "\n\n\n").out == "\n\n\n");
  CHECK(run_command(tok + " encode -m " + model, "").out.empty());
}

TEST_CASE("cli: output order is the same on 1 and many threads, over many chunks", "[cli]") {
  TmpDir dir;
  auto model = cli_train(dir);
  std::string big;
  const std::string text = fixture_text();
  for (int i = 0; i < 250; ++i) big += text + (i % 3 ? "" : "\n");  // 10,000+ lines, some empty
  auto one = run_command(tok + " encode -m " + model + " --threads 1", big);
  auto four = run_command(tok + " encode -m " + model + " --threads 4", big);
  REQUIRE(one.status == 0);
  CHECK(count_lines(one.out) == count_lines(big));
  CHECK(four.out == one.out);
  auto back = run_command(tok + " decode -m " + model + " --threads 3", one.out);
  CHECK(back.out == big);
}

TEST_CASE("cli: the same seed gives the same model bytes", "[cli]") {
  TmpDir dir;
  std::string corpus;
  auto en = tt::util::read_lines(tt::test::fixture_path("corpus.en"));
  for (size_t i = 0; i < 300; ++i) corpus += en[i % en.size()] + " " + en[(i * 11) % en.size()] + "\n";
  auto input = dir.write("corpus.txt", corpus);
  auto train = [&](const std::string& prefix, int seed) {
    return run_command(tok + " train -i " + input + " -o " + dir.file(prefix) +
                       " --vocab-size 120 --input-sentence-size 150 --threads 2 --seed " + std::to_string(seed))
        .status;
  };
  REQUIRE(train("a", 42) == 0);
  REQUIRE(train("b", 42) == 0);
  REQUIRE(train("c", 43) == 0);
  CHECK(tt::test::read_file(dir.file("a.model")) == tt::test::read_file(dir.file("b.model")));
  CHECK(tt::test::read_file(dir.file("a.model")) != tt::test::read_file(dir.file("c.model")));
}

TEST_CASE("cli: vocab lists id, piece and score", "[cli]") {
  TmpDir dir;
  auto model = cli_train(dir);
  auto r = run_command(tok + " vocab -m " + model);
  REQUIRE(r.status == 0);
  CHECK(count_lines(r.out) == 200);
  CHECK(r.out.rfind("0\t<pad>\t0\n1\t<unk>\t0\n2\t<s>\t0\n3\t</s>\t0\n", 0) == 0);
}

TEST_CASE("cli: n-best and sampling keep one output line per input line", "[cli]") {
  TmpDir dir;
  auto model = cli_train(dir);
  const std::string input = "A woman is playing football.\n\nTwo dogs.\n";
  auto nbest = run_command(tok + " encode -m " + model + " --nbest 3", input);
  REQUIRE(nbest.status == 0);
  CHECK(count_lines(nbest.out) == 3);
  CHECK(std::count(nbest.out.begin(), nbest.out.end(), '\t') >= 2);
  auto sample = [&](int threads) {
    return run_command(tok + " encode -m " + model + " --alpha 0.5 --seed 3 --threads " + std::to_string(threads) +
                           " | " + tok + " decode -m " + model,
                       input)
        .out;
  };
  CHECK(sample(1) == input);  // any sampled segmentation decodes back to the text
  auto s1 = run_command(tok + " encode -m " + model + " --format id --alpha 0.5 --seed 3 --threads 1", input).out;
  CHECK(run_command(tok + " encode -m " + model + " --format id --alpha 0.5 --seed 3 --threads 1", input).out == s1);
  CHECK(run_command(tok + " encode -m " + model + " --nbest 2 --alpha 0.1", input).status == 2);
}

TEST_CASE("cli: seeded sampling is reproducible on several threads, over many chunks", "[cli]") {
  TmpDir dir;
  auto model = cli_train(dir);
  std::string big;
  for (int i = 0; i < 250; ++i) big += fixture_text();  // 10,000 lines: chunks go to both workers
  const std::string cmd = tok + " encode -m " + model + " --format id --alpha 0.5 --seed 11 --threads 2";
  auto a = run_command(cmd, big);
  REQUIRE(a.status == 0);
  CHECK(count_lines(a.out) == count_lines(big));
  CHECK(run_command(cmd, big).out == a.out);
  CHECK(run_command(tok + " encode -m " + model + " --format id --threads 2", big).out != a.out);  // it does sample
}

TEST_CASE("cli: bad input gives one clear message and a non-zero exit", "[cli]") {
  TmpDir dir;
  auto model = cli_train(dir);
  SECTION("missing model") {
    auto r = run_command(tok + " encode -m " + dir.file("nope.model"), "hi\n");
    CHECK(r.status == 1);
    CHECK(r.err.find("tt-tokenize: error: " + dir.file("nope.model")) != std::string::npos);
  }
  SECTION("corrupt model") {
    auto bad = dir.write("bad.model", "garbage\xff\xff");
    auto r = run_command(tok + " decode -m " + bad, "x\n");
    CHECK(r.status == 1);
    CHECK(r.err.find(bad + ": not a valid SentencePiece model") != std::string::npos);
    CHECK(r.out.empty());
  }
  SECTION("unknown subcommand or option") {
    auto sub = run_command(tok + " tokenise -m " + model);
    CHECK(sub.status == 2);
    CHECK(sub.err.find("unknown subcommand 'tokenise'") != std::string::npos);
    auto opt = run_command(tok + " encode -m " + model + " --no-such-option", "x\n");
    CHECK(opt.status == 2);
    CHECK(opt.err.find("tt-tokenize: error:") != std::string::npos);
    CHECK(run_command(tok + " encode -m " + model + " --format words", "x\n").status == 2);
  }
  SECTION("a non-number id names the line") {
    auto r = run_command(tok + " decode -m " + model + " --format id", "5 6\n7 x8\n");
    CHECK(r.status == 1);
    CHECK(r.err.find("<stdin>:2: 'x8' is not an id") != std::string::npos);
    // The library names the option by field; the tool names its flag.
    CHECK(r.err.find("hint: decode --format id reads space-separated integers; use --format piece") !=
          std::string::npos);
  }
  SECTION("an id out of range names the line") {
    auto r = run_command(tok + " decode -m " + model + " --format id --threads 2", "5 6\n\n7 200\n");
    CHECK(r.status == 1);
    CHECK(r.err.find("<stdin>:3: id 200 is out of range") != std::string::npos);
  }
  SECTION("invalid UTF-8 names the line") {
    auto r = run_command(tok + " encode -m " + model, "fine\nstill fine\nbroken \xe2\x82 here\n");
    CHECK(r.status == 1);
    CHECK(r.err.find("<stdin>:3: invalid UTF-8") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') <= 2);  // one message (+ hint)
  }
  SECTION("training options the library refuses are named as flags") {
    auto r = run_command(tok + " train -i " + tt::test::fixture_path("corpus.en") + " -o " + dir.file("small") +
                         " --vocab-size 3");
    CHECK(r.status == 1);
    CHECK(r.err.find("tt-tokenize: error: --vocab-size 3 is too small") == 0);
    r = run_command(tok + " train -i " + tt::test::fixture_path("corpus.en") + " -o " + dir.file("short") +
                    " --vocab-size 100 --max-sentence-length 10");
    CHECK(r.status == 1);
    CHECK(r.err.find("longer than --max-sentence-length)\ntt-tokenize: hint: check the --input files") !=
          std::string::npos);
  }
  SECTION("a failed train leaves no partial model") {
    auto r = run_command(tok + " train -i " + tt::test::fixture_path("corpus.en") + " -o " + dir.file("big") +
                         " --vocab-size 9000");
    CHECK(r.status == 1);
    CHECK(r.err.find("Vocabulary size too high") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.file("big.model")));
    CHECK_FALSE(std::filesystem::exists(dir.file("big.vocab")));
  }
  SECTION("a missing or directory training file is a file error (exit 1) naming it, before any work") {
    auto r = run_command(tok + " train -i " + tt::test::fixture_path("corpus.en") + " " + dir.file("none.txt") +
                         " -o " + dir.file("x") + " --vocab-size 100");
    CHECK(r.status == 1);
    CHECK(r.err.find("tt-tokenize: error: " + dir.file("none.txt") + ": cannot read: No such file") !=
          std::string::npos);
    r = run_command(tok + " train -i " + dir.path() + " -o " + dir.file("x") + " --vocab-size 100");
    CHECK(r.status == 1);
    CHECK(r.err.find(dir.path() + ": cannot read: it is a directory") != std::string::npos);
  }
  SECTION("a directory as the model names the path, not basic_filebuf") {
    auto r = run_command(tok + " encode -m " + dir.path(), "hi\n");
    CHECK(r.status == 1);
    CHECK(r.err.find("tt-tokenize: error: " + dir.path() + ": cannot read SentencePiece model: Is a directory") !=
          std::string::npos);
    CHECK(r.err.find("basic_filebuf") == std::string::npos);
  }
  SECTION("ids from a CRLF file decode as spm_decode decodes them; other control bytes are shown") {
    auto lf = run_command(tok + " decode -m " + model + " --format id", "5 6\n7 8\n");
    auto crlf = run_command(tok + " decode -m " + model + " --format id", "5 6\r\n7 8\r\n");
    REQUIRE(lf.status == 0);
    CHECK(crlf.status == 0);
    CHECK(crlf.out == lf.out);
    auto bad = run_command(tok + " decode -m " + model + " --format id", "5 6\n7\r 8\n");
    CHECK(bad.status == 1);
    CHECK(bad.err.find("<stdin>:2: '7\\r' is not an id") != std::string::npos);
  }
  SECTION("unknown flags are named, before or after the subcommand") {
    auto top = run_command(tok + " --bogus");
    CHECK(top.status == 2);
    CHECK(top.err.find("--bogus") != std::string::npos);
    auto sub = run_command(tok + " encode --bogus");  // not "--model is required"
    CHECK(sub.status == 2);
    CHECK(sub.err.find("unknown argument '--bogus'") != std::string::npos);
    auto none = run_command(tok);
    CHECK(none.status == 2);
    CHECK(none.err.find("a subcommand is required: train, encode, decode or vocab") != std::string::npos);
  }
  SECTION("--version works after a subcommand") {
    for (const char* sub : {"train", "encode", "decode", "vocab"}) {
      INFO(sub);
      auto r = run_command(tok + " " + sub + " --version");
      CHECK(r.status == 0);
      CHECK(r.out.rfind("tt-tokenize ", 0) == 0);
    }
  }
  SECTION("--threads is capped") {
    CHECK(run_command(tok + " encode -m " + model + " --threads 100000", "x\n").status == 2);
    CHECK(run_command(tok + " encode -m " + model + " --threads 0", "x\n").status == 2);
    CHECK(run_command(tok + " train -i x -o y --vocab-size 10 --threads 100000").status == 2);
  }
}

TEST_CASE("cli: a closed pipe ends encode quietly", "[cli]") {
  TmpDir dir;
  auto model = cli_train(dir);
  std::string big;
  for (int i = 0; i < 200; ++i) big += fixture_text();
  auto r = run_command(tok + " encode -m " + model + " --threads 2 | head -n 1", big);
  CHECK(r.status == 0);
  CHECK(count_lines(r.out) == 1);
  CHECK(r.err.empty());
}
