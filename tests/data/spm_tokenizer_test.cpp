#include "data/spm_tokenizer.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <thread>

#include "data/spm_fixture.h"
#include "support/tmp_dir.h"
#include "util/error.h"
#include "util/text_io.h"

using tt::data::SpmTokenizer;
using tt::test::TmpDir;

TEST_CASE("a trained model follows tt's special-id convention", "[data]") {
  TmpDir dir;
  auto tok = SpmTokenizer::load(tt::test::train_fixture_model(dir));
  CHECK(tok.piece_size() == 200);
  CHECK(tok.pad_id() == 0);
  CHECK(tok.unk_id() == 1);
  CHECK(tok.bos_id() == 2);
  CHECK(tok.eos_id() == 3);
  CHECK(tok.has_tt_special_ids());
  CHECK(tok.id_to_piece(0) == "<pad>");
  CHECK(tok.id_to_piece(1) == "<unk>");
  CHECK(tok.id_to_piece(2) == "<s>");
  CHECK(tok.id_to_piece(3) == "</s>");
  CHECK(tok.is_unknown(1));
  CHECK(tok.is_control(2));
  CHECK(tok.piece_to_id("<s>") == 2);
  CHECK(tok.piece_to_id("no-such-piece-xyz") == tok.unk_id());
}

TEST_CASE("encode and decode round-trip normalised text, as ids and as pieces", "[data]") {
  for (const char* type : {"unigram", "bpe"}) {
    INFO(type);
    TmpDir dir;
    auto tok = SpmTokenizer::load(tt::test::train_fixture_model(dir, type));
    for (const char* corpus : {"corpus.en", "corpus.de"}) {
      for (const auto& line : tt::util::read_lines(tt::test::fixture_path(corpus))) {
        auto ids = tok.encode_ids(line);
        auto pieces = tok.encode_pieces(line);
        REQUIRE(ids.size() == pieces.size());
        for (size_t i = 0; i < ids.size(); ++i) CHECK(tok.id_to_piece(ids[i]) == pieces[i]);
        CHECK(tok.decode_ids(ids) == line);
        CHECK(tok.decode_pieces(pieces) == line);
      }
    }
  }
}

TEST_CASE("encoding subword-splits unseen words and maps unknown characters to <unk>", "[data]") {
  TmpDir dir;
  auto tok = SpmTokenizer::load(tt::test::train_fixture_model(dir));
  auto pieces = tok.encode_pieces("The dogs are swimming.");
  CHECK(pieces.size() >= 4);
  CHECK(tok.decode_pieces(pieces) == "The dogs are swimming.");
  auto ids = tok.encode_ids("\xe4\xb8\x96");  // a CJK character that the fixture never contains
  CHECK(std::find(ids.begin(), ids.end(), tok.unk_id()) != ids.end());
  CHECK(tok.encode_ids("").empty());
  CHECK(tok.decode_ids({}).empty());
}

TEST_CASE("sampling and n-best give valid segmentations of the same text", "[data]") {
  TmpDir dir;
  auto tok = SpmTokenizer::load(tt::test::train_fixture_model(dir));
  const std::string text = "A woman is playing football in the garden.";
  std::vector<int> sample;
  for (int i = 0; i < 20; ++i) {
    tok.sample_encode_ids(text, -1, 0.5f, sample);
    CHECK(tok.decode_ids(sample) == text);
  }
  auto nbest = tok.nbest_encode_pieces(text, 3);
  REQUIRE(nbest.size() == 3);
  CHECK(nbest[0] == tok.encode_pieces(text));
  CHECK(nbest[1] != nbest[0]);
  for (const auto& hyp : nbest) CHECK(tok.decode_pieces(hyp) == text);
}

TEST_CASE("keyed sampling: one key gives one segmentation on any thread, keys differ", "[data]") {
  TmpDir dir;
  auto tok = SpmTokenizer::load(tt::test::train_fixture_model(dir));
  const std::string text = "A woman is playing football in the garden.";
  std::vector<std::vector<int>> by_key(16);
  std::vector<int> other;
  for (uint32_t key = 0; key < by_key.size(); ++key) {
    tok.sample_encode_ids(text, -1, 0.5f, key, by_key[key]);
    CHECK(tok.decode_ids(by_key[key]) == text);
    tok.sample_encode_ids("The dogs are swimming.", -1, 0.5f, other);  // moves the thread's generator on
  }
  // Again, in reverse order, on another thread: the same segmentation for every key.
  std::thread([&] {
    std::vector<int> again;
    for (uint32_t key = by_key.size(); key-- > 0;) {
      tok.sample_encode_ids(text, -1, 0.5f, key, again);
      CHECK(again == by_key[key]);
    }
  }).join();
  std::set<std::vector<int>> distinct(by_key.begin(), by_key.end());
  CHECK(distinct.size() >= 3);
  // n-best 1 draws from the best segmentation alone.
  tok.sample_encode_ids(text, 1, 0.5f, 7, other);
  CHECK(other == tok.encode_ids(text));
}

TEST_CASE("an id out of range is an error that names the model, not a crash", "[data]") {
  TmpDir dir;
  auto tok = SpmTokenizer::load(tt::test::train_fixture_model(dir));
  CHECK_THROWS_AS(tok.decode_ids({5, 200}), tt::FormatError);
  CHECK_THROWS_WITH(tok.decode_ids({5, 200}), Catch::Contains("id 200 is out of range") && Catch::Contains("m.model"));
  CHECK_THROWS_WITH(tok.decode_ids({-1}), Catch::Contains("id -1 is out of range"));
  CHECK_THROWS_AS(tok.id_to_piece(1000), tt::FormatError);
}

TEST_CASE("loading a missing, empty or corrupt model names the file", "[data]") {
  TmpDir dir;
  CHECK_THROWS_AS(SpmTokenizer::load(dir.file("missing.model")), tt::IoError);
  CHECK_THROWS_WITH(SpmTokenizer::load(dir.file("missing.model")), Catch::Contains("missing.model"));
  auto empty = dir.write("empty.model", "");
  CHECK_THROWS_AS(SpmTokenizer::load(empty), tt::FormatError);
  CHECK_THROWS_WITH(SpmTokenizer::load(empty), Catch::Contains("empty.model"));
  auto text = dir.write("text.model", "this is not a protobuf\n\xff\xff\xff\xff");
  CHECK_THROWS_AS(SpmTokenizer::load(text), tt::FormatError);
  CHECK_THROWS_WITH(SpmTokenizer::load(text), Catch::Contains("text.model") && Catch::Contains("not a valid"));
  // A real model cut in half is corrupt too.
  auto model = tt::test::read_file(tt::test::train_fixture_model(dir));
  auto cut = dir.write("cut.model", model.substr(0, model.size() / 2));
  CHECK_THROWS_WITH(SpmTokenizer::load(cut), Catch::Contains("cut.model"));
  // A piece whose first byte is NUL parses as a protobuf, but SentencePiece's trie builder then throws its
  // own exception (not a Status): it must come out as tt's error naming the file (the fuzzer found it).
  auto piece = model.find("\xe2\x96\x81");  // the first piece starting with the word-boundary mark
  REQUIRE(piece != std::string::npos);
  model[piece] = '\0';
  auto nul = dir.write("nul-piece.model", model);
  CHECK_THROWS_AS(SpmTokenizer::load(nul), tt::FormatError);
  CHECK_THROWS_WITH(SpmTokenizer::load(nul), Catch::Contains("nul-piece.model") && Catch::Contains("not a valid"));
}

TEST_CASE("extra options add bos/eos ids and reject unknown options", "[data]") {
  TmpDir dir;
  auto tok = SpmTokenizer::load(tt::test::train_fixture_model(dir));
  auto plain = tok.encode_ids("Two dogs.");
  tok.set_encode_extra_options("bos:eos");
  auto framed = tok.encode_ids("Two dogs.");
  REQUIRE(framed.size() == plain.size() + 2);
  CHECK(framed.front() == tt::data::spm_bos_id);
  CHECK(framed.back() == tt::data::spm_eos_id);
  CHECK_THROWS_AS(tok.set_encode_extra_options("bogus"), tt::ConfigError);
}
