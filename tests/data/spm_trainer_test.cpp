#include "data/spm_trainer.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "data/sentence_sampler.h"
#include "data/spm_fixture.h"
#include "data/spm_tokenizer.h"
#include "support/tmp_dir.h"
#include "util/error.h"
#include "util/text_io.h"

using tt::data::SpmTrainOptions;
using tt::test::TmpDir;

namespace {

// A corpus of 400 distinct lines built from the fixture, large enough for --input-sentence-size (> 100).
std::string write_big_corpus(const TmpDir& dir) {
  auto en = tt::util::read_lines(tt::test::fixture_path("corpus.en"));
  auto de = tt::util::read_lines(tt::test::fixture_path("corpus.de"));
  std::string text;
  for (size_t i = 0; i < 400; ++i) {
    text += (i % 2 ? en : de)[i % en.size()] + " " + (i % 3 ? de : en)[(i * 7) % de.size()] + "\n";
  }
  return dir.write("big.txt", text);
}

SpmTrainOptions sampled_options(const std::string& input, const std::string& prefix, uint64_t seed) {
  SpmTrainOptions o;
  o.inputs = {input};
  o.model_prefix = prefix;
  o.vocab_size = 150;
  o.input_sentence_size = 120;
  o.seed = seed;
  o.threads = 2;
  return o;
}

// Names of the files in a directory (to prove that nothing, not even a temporary, was left behind).
std::vector<std::string> listing(const TmpDir& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("training writes PREFIX.model and PREFIX.vocab, and the vocab lists every piece", "[data]") {
  TmpDir dir;
  auto model = tt::test::train_fixture_model(dir, "bpe", 180);
  CHECK(listing(dir) == std::vector<std::string>{"m.model", "m.vocab"});
  auto tok = tt::data::SpmTokenizer::load(model);
  auto vocab = tt::util::read_lines(dir.file("m.vocab"));
  REQUIRE(vocab.size() == 180);
  CHECK(vocab[0] == "<pad>\t0");
  CHECK(vocab[3] == "</s>\t0");
  CHECK(vocab[100].rfind(tok.id_to_piece(100) + "\t", 0) == 0);
  CHECK(tt::data::vocab_file_text(tt::test::read_file(model)) == tt::test::read_file(dir.file("m.vocab")));
}

TEST_CASE("several inputs give one joint vocabulary", "[data]") {
  TmpDir dir;
  auto tok = tt::data::SpmTokenizer::load(tt::test::train_fixture_model(dir));
  for (const char* text : {"Fußball über Mädchen", "football and children"}) {
    auto ids = tok.encode_ids(text);
    CHECK(std::find(ids.begin(), ids.end(), tok.unk_id()) == ids.end());
  }
}

TEST_CASE("the same seed reproduces the same model bytes and another seed samples differently", "[data]") {
  TmpDir dir;
  auto corpus = write_big_corpus(dir);
  auto a = tt::data::train_spm(sampled_options(corpus, dir.file("a"), 7));
  tt::data::train_spm(sampled_options(corpus, dir.file("b"), 7));
  tt::data::train_spm(sampled_options(corpus, dir.file("c"), 8));
  CHECK(a.sentences_used == 120);
  CHECK(a.sentences_eligible == 400);
  auto model_a = tt::test::read_file(dir.file("a.model"));
  REQUIRE_FALSE(model_a.empty());
  CHECK(model_a == tt::test::read_file(dir.file("b.model")));
  CHECK(tt::test::read_file(dir.file("a.vocab")) == tt::test::read_file(dir.file("b.vocab")));
  CHECK(model_a != tt::test::read_file(dir.file("c.model")));
}

TEST_CASE("reservoir sampling: deterministic per seed, uniform-size, skips what SentencePiece skips", "[data]") {
  TmpDir dir;
  std::string text;
  for (int i = 0; i < 50; ++i) text += "sentence " + std::to_string(i) + "\n";
  text += "\n" + std::string(100, 'x') + "\nhas \xe2\x81\x87 inside\n";
  auto path = dir.write("s.txt", text);
  tt::data::SamplerOptions all;
  all.max_sentence_bytes = 50;
  auto kept = tt::data::sample_sentences({path}, all);
  REQUIRE(kept.sentences.size() == 50);
  CHECK(kept.sentences[0] == "sentence 0");
  CHECK(kept.too_long == 1);
  CHECK(kept.skipped_other == 2);

  tt::data::SamplerOptions some = all;
  some.max_sentences = 10;
  some.seed = 1;
  auto s1 = tt::data::sample_sentences({path}, some);
  auto s1_again = tt::data::sample_sentences({path}, some);
  some.seed = 2;
  auto s2 = tt::data::sample_sentences({path}, some);
  CHECK(s1.sentences.size() == 10);
  CHECK(s1.eligible == 50);
  CHECK(s1.sentences == s1_again.sentences);
  CHECK(s1.sentences != s2.sentences);
  // Not simply the first ten lines: the reservoir reaches into the rest of the file.
  CHECK(std::any_of(s1.sentences.begin(), s1.sentences.end(), [](const std::string& s) { return s.size() > 10; }));
}

TEST_CASE("invalid UTF-8 in a training file is reported with FILE:LINE", "[data]") {
  TmpDir dir;
  auto path = dir.write("bad.txt", "good line\nalso good\nbad \xc3\x28 byte\n");
  CHECK_THROWS_AS(tt::data::sample_sentences({path}, {}), tt::FormatError);
  CHECK_THROWS_WITH(tt::data::sample_sentences({path}, {}), Catch::Contains("bad.txt:3: invalid UTF-8"));
}

TEST_CASE("a failed training run leaves no PREFIX.model, no PREFIX.vocab and no temporary", "[data]") {
  TmpDir dir;
  SpmTrainOptions o;
  o.inputs = {tt::test::fixture_path("corpus.en")};
  o.model_prefix = dir.file("m");
  o.threads = 1;
  SECTION("vocabulary too large for the corpus") {
    o.vocab_size = 5000;
    CHECK_THROWS_WITH(tt::data::train_spm(o), Catch::Contains("Vocabulary size too high"));
  }
  SECTION("missing input file") {
    o.inputs.push_back(dir.file("missing.txt"));
    CHECK_THROWS_AS(tt::data::train_spm(o), tt::IoError);
  }
  SECTION("invalid options are named") {
    o.model_type = "trigram";
    CHECK_THROWS_WITH(tt::data::train_spm(o), Catch::StartsWith("model_type: unknown model type 'trigram'"));
    o.model_type = "bpe";
    o.input_sentence_size = 50;
    CHECK_THROWS_WITH(tt::data::train_spm(o), Catch::StartsWith("input_sentence_size must be 0"));
  }
  SECTION("an output directory that does not exist") {
    o.vocab_size = 100;
    o.model_prefix = dir.file("no/such/dir/m");
    CHECK_THROWS_AS(tt::data::train_spm(o), tt::IoError);
    CHECK_THROWS_WITH(tt::data::train_spm(o), Catch::Contains("no/such/dir"));
  }
  CHECK(listing(dir).empty());
}

TEST_CASE("a failed training run keeps an existing model intact", "[data]") {
  TmpDir dir;
  auto model = tt::test::train_fixture_model(dir);
  auto before = tt::test::read_file(model);
  SpmTrainOptions o;
  o.inputs = {tt::test::fixture_path("corpus.en")};
  o.model_prefix = dir.file("m");
  o.vocab_size = 5000;
  o.threads = 1;
  CHECK_THROWS(tt::data::train_spm(o));
  CHECK(tt::test::read_file(model) == before);
  CHECK(listing(dir) == std::vector<std::string>{"m.model", "m.vocab"});
}
