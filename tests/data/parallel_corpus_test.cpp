#include "data/parallel_corpus.h"

#include <sentencepiece_trainer.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "data/spm_fixture.h"
#include "support/tmp_dir.h"
#include "util/error.h"
#include "util/text_io.h"

using tt::data::CorpusFilter;
using tt::data::ParallelCorpus;
using tt::data::SpmTokenizer;
using tt::test::TmpDir;

namespace {

// One tt-convention model for the whole binary (training takes a moment).
const SpmTokenizer& model() {
  static TmpDir dir;
  static SpmTokenizer tok = SpmTokenizer::load(tt::test::train_fixture_model(dir));
  return tok;
}

std::vector<int32_t> ids_of(const std::string& line, bool with_eos) {
  std::vector<int> ids = model().encode_ids(line);
  std::vector<int32_t> out(ids.begin(), ids.end());
  if (with_eos) out.push_back(model().eos_id());
  return out;
}

std::vector<int32_t> vec(std::span<const int32_t> s) { return {s.begin(), s.end()}; }

std::string join_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

ParallelCorpus load(const std::string& src, const std::string& tgt, const CorpusFilter& filter = {},
                    int threads = 1) {
  return ParallelCorpus::load(src, tgt, model(), model(), filter, threads);
}

// `pairs` pairs cycling through the fixture, so the load spans several chunks of lines.
struct BigCorpus {
  std::vector<std::string> en, de;
  std::string en_path, de_path;
  BigCorpus(const TmpDir& dir, size_t pairs) {
    auto en_fixture = tt::util::read_lines(tt::test::fixture_path("corpus.en"));
    auto de_fixture = tt::util::read_lines(tt::test::fixture_path("corpus.de"));
    for (size_t i = 0; i < pairs; ++i) {
      en.push_back(en_fixture[i % en_fixture.size()]);
      de.push_back(de_fixture[(i * 7) % de_fixture.size()]);
    }
    en_path = dir.write("big.en", join_lines(en));
    de_path = dir.write("big.de", join_lines(de));
  }
};

template <typename E>
std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("no exception of the expected type");
  return {};
}

}  // namespace

TEST_CASE("a loaded corpus stores source = pieces + eos and target = pieces, in file order", "[data][corpus]") {
  auto en = tt::util::read_lines(tt::test::fixture_path("corpus.en"));
  auto de = tt::util::read_lines(tt::test::fixture_path("corpus.de"));
  auto corpus = load(tt::test::fixture_path("corpus.en"), tt::test::fixture_path("corpus.de"));
  REQUIRE(corpus.size() == 40);
  int64_t src_tokens = 0, tgt_tokens = 0;
  for (size_t i = 0; i < corpus.size(); ++i) {
    INFO("pair " << i);
    CHECK(vec(corpus.source(i)) == ids_of(en[i], true));
    CHECK(vec(corpus.target(i)) == ids_of(de[i], false));
    CHECK(corpus.source(i).back() == 3);
    CHECK(corpus.source_length(i) == static_cast<int32_t>(corpus.source(i).size()));
    CHECK(corpus.target_length(i) == static_cast<int32_t>(corpus.target(i).size()));
    src_tokens += static_cast<int64_t>(corpus.source(i).size());
    tgt_tokens += static_cast<int64_t>(corpus.target(i).size());
  }
  const auto& s = corpus.stats();
  CHECK(s.lines == 40);
  CHECK(s.kept == 40);
  CHECK(s.dropped_empty + s.dropped_long + s.dropped_ratio == 0);
  CHECK(s.src_tokens == src_tokens);
  CHECK(s.tgt_tokens == tgt_tokens);
  // One id buffer and one offset table, nothing per pair.
  CHECK(corpus.memory_bytes() == static_cast<size_t>(src_tokens + tgt_tokens) * 4 + (2 * 40 + 1) * 8 + 40);
}

TEST_CASE("the result does not depend on the thread count, across chunks", "[data][corpus]") {
  TmpDir dir;
  BigCorpus big(dir, 5000);  // more than one chunk of lines
  auto one = load(big.en_path, big.de_path, {}, 1);
  auto four = load(big.en_path, big.de_path, {}, 4);
  REQUIRE(one.size() == 5000);
  REQUIRE(four.size() == 5000);
  for (size_t i : {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, size_t{4097}, size_t{4999}}) {
    INFO("pair " << i);
    CHECK(vec(one.source(i)) == ids_of(big.en[i], true));
    CHECK(vec(one.target(i)) == ids_of(big.de[i], false));
  }
  bool same = true;
  for (size_t i = 0; i < 5000; ++i) {
    same = same && vec(one.source(i)) == vec(four.source(i)) && vec(one.target(i)) == vec(four.target(i));
  }
  CHECK(same);
  CHECK(one.stats().src_tokens == four.stats().src_tokens);
  CHECK(one.stats().tgt_tokens == four.stats().tgt_tokens);
}

namespace {

bool same_ids(const ParallelCorpus& a, const ParallelCorpus& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (vec(a.source(i)) != vec(b.source(i)) || vec(a.target(i)) != vec(b.target(i))) return false;
  return true;
}

std::vector<int> without_eos(std::span<const int32_t> s) { return {s.begin(), s.end() - 1}; }

}  // namespace

TEST_CASE("subword sampling keeps the best segmentation's pairs and keys each line's sample", "[data][corpus]") {
  TmpDir dir;
  BigCorpus big(dir, 5000);  // more than one chunk of lines
  CorpusFilter filter;
  filter.max_len = 24;
  tt::data::SubwordSampling sampling;
  sampling.alpha = 0.1f;
  sampling.seed = 9;
  sampling.epoch = 2;
  // A sampled load of the files whose load without sampling was `best`.
  auto sampled = [&](tt::data::SubwordSampling s, const ParallelCorpus& best, const CorpusFilter& f, int threads) {
    s.fates = &best.line_fates();
    return ParallelCorpus::load(big.en_path, big.de_path, model(), model(), f, threads, s);
  };
  const ParallelCorpus best = load(big.en_path, big.de_path, filter);
  const ParallelCorpus one = sampled(sampling, best, filter, 1);
  REQUIRE(best.size() > 1000);
  REQUIRE(best.stats().dropped_long > 0);
  // The same pairs: counts, and the same text under other pieces, every side within max_len.
  CHECK(one.size() == best.size());
  CHECK(one.stats().dropped_long == best.stats().dropped_long);
  CHECK(one.line_fates() == best.line_fates());
  size_t differ = 0, within = 0;
  for (size_t i = 0; i < best.size(); ++i) {
    CHECK(model().decode_ids(without_eos(one.source(i))) == model().decode_ids(without_eos(best.source(i))));
    const auto t = one.target(i), b = best.target(i);
    CHECK(model().decode_ids({t.begin(), t.end()}) == model().decode_ids({b.begin(), b.end()}));
    differ += vec(one.source(i)) != vec(best.source(i)) || vec(t) != vec(b);
    within += one.source_length(i) <= filter.max_len + 1 && one.target_length(i) <= filter.max_len;
  }
  CHECK(differ > best.size() / 4);  // a 200-piece vocabulary: many words have one segmentation
  CHECK(within == best.size());
  // Without the limit, some of those pairs sample a side past 24 pieces: above, they fell back to the best.
  CorpusFilter wide;
  wide.max_len = 1000;
  const ParallelCorpus best_wide = load(big.en_path, big.de_path, wide);
  const ParallelCorpus one_wide = sampled(sampling, best_wide, wide, 1);
  size_t fell_back = 0;
  for (size_t i = 0; i < best_wide.size(); ++i) {
    const bool kept = best_wide.source_length(i) <= 25 && best_wide.target_length(i) <= 24;
    fell_back += kept && (one_wide.source_length(i) > 25 || one_wide.target_length(i) > 24);
  }
  CHECK(fell_back > 0);
  // One key, one segmentation, on any thread count; another epoch, seed or corpus, other samples.
  CHECK(same_ids(one, sampled(sampling, best, filter, 4)));
  for (int change = 0; change < 3; ++change) {
    INFO("change " << change);
    tt::data::SubwordSampling other = sampling;
    if (change == 0) other.epoch = 3;
    if (change == 1) other.seed = 10;
    if (change == 2) other.corpus = 1;
    CHECK_FALSE(same_ids(one, sampled(other, best, filter, 2)));
  }
}

TEST_CASE("filters drop empty, over-long and extreme-ratio pairs and count each", "[data][corpus]") {
  TmpDir dir;
  const std::string long_line = "A man in a blue shirt is standing on a ladder while two dogs are running through "
                                "the snow and a woman is reading a book in the park.";
  const std::vector<std::string> en = {
      "Two dogs are running through the snow.",  // kept
      "",                                         // empty source
      "A woman is reading a book.",               // target has no pieces (spaces only)
      long_line,                                  // source too long
      "Dogs.",                                    // extreme ratio
      "A group of people are waiting for the bus.",
  };
  const std::vector<std::string> de = {
      "Zwei Hunde laufen durch den Schnee.",
      "Eine Frau.",
      "   ",
      "Ein Mann.",
      "Zwei Hunde laufen durch den Schnee im Park.",
      "Eine Gruppe von Menschen wartet auf den Bus.",
  };
  const auto src = dir.write("f.en", join_lines(en));
  const auto tgt = dir.write("f.de", join_lines(de));
  REQUIRE(model().encode_ids("   ").empty());
  const auto len = [](const std::string& line) { return static_cast<int>(model().encode_ids(line).size()); };
  const int long_len = len(long_line);
  int others_max = 0;
  for (size_t i : {0, 4, 5}) others_max = std::max({others_max, len(en[i]), len(de[i])});
  REQUIRE(long_len > others_max);
  const double ratio = static_cast<double>(len(de[4])) / len(en[4]);
  double others_ratio = 0;
  for (size_t i : {0, 5}) {
    others_ratio = std::max(others_ratio, static_cast<double>(std::max(len(en[i]), len(de[i]))) /
                                              std::min(len(en[i]), len(de[i])));
  }
  REQUIRE(ratio > others_ratio);

  SECTION("max_len keeps a side of exactly max_len pieces and drops one more") {
    CorpusFilter at{long_len, 0};
    auto kept_all = load(src, tgt, at);
    CHECK(kept_all.stats().dropped_long == 0);
    CHECK(kept_all.stats().kept == 4);
    CorpusFilter below{long_len - 1, 0};
    auto c = load(src, tgt, below, 2);
    const auto& s = c.stats();
    CHECK(s.lines == 6);
    CHECK(s.dropped_empty == 2);
    CHECK(s.dropped_long == 1);
    CHECK(s.dropped_ratio == 0);
    CHECK(s.kept == 3);
    REQUIRE(c.size() == 3);
    CHECK(vec(c.source(0)) == ids_of(en[0], true));
    CHECK(vec(c.source(1)) == ids_of(en[4], true));
    CHECK(vec(c.target(2)) == ids_of(de[5], false));
    CHECK(s.src_tokens == len(en[0]) + len(en[4]) + len(en[5]) + 3);
    CHECK(s.tgt_tokens == len(de[0]) + len(de[4]) + len(de[5]));
  }
  SECTION("max_len_ratio keeps a pair at exactly the ratio and drops it just below") {
    auto at = load(src, tgt, CorpusFilter{long_len - 1, ratio});
    CHECK(at.stats().dropped_ratio == 0);
    CHECK(at.stats().kept == 3);
    auto below = load(src, tgt, CorpusFilter{long_len - 1, ratio * 0.999});
    CHECK(below.stats().dropped_ratio == 1);
    CHECK(below.stats().dropped_long == 1);
    CHECK(below.stats().dropped_empty == 2);
    CHECK(below.stats().kept == 2);
    REQUIRE(below.size() == 2);
    CHECK(vec(below.source(1)) == ids_of(en[5], true));
    using tt::data::LineFate;
    CHECK(below.line_fates() == std::vector<LineFate>{LineFate::kept, LineFate::empty, LineFate::empty,
                                                      LineFate::too_long, LineFate::ratio, LineFate::kept});
  }
  SECTION("the default filter keeps every non-empty pair") {
    auto c = load(src, tgt);
    CHECK(c.stats().kept == 4);
    CHECK(c.stats().dropped_empty == 2);
  }
}

TEST_CASE("different line counts are one error naming both files and both counts", "[data][corpus]") {
  TmpDir dir;
  const auto src = dir.write("a.en", "one\ntwo\nthree\n");
  const auto tgt = dir.write("a.de", "eins\nzwei");  // no final newline: still 2 lines
  const auto what = message_of<tt::FormatError>([&] { load(src, tgt); });
  CHECK_THAT(what, Catch::Contains(src + " has 3 lines") && Catch::Contains(tgt + " has 2"));

  SECTION("also when one side is stdin, which cannot be counted ahead") {
    REQUIRE(std::freopen(tgt.c_str(), "rb", stdin));
    const auto streamed = message_of<tt::FormatError>([&] { load(src, "-"); });
    REQUIRE(std::freopen("/dev/null", "rb", stdin));
    CHECK_THAT(streamed, Catch::Contains(src + " has 3 lines") && Catch::Contains("<stdin> has 2"));
  }
}

TEST_CASE("invalid UTF-8 names file:line, the first bad line whatever the threads", "[data][corpus]") {
  TmpDir dir;
  const auto src = dir.write("u.en", "Two dogs.\nA man.\nA woman.\n");
  const auto tgt = dir.write("u.de", "Zwei Hunde.\nEin \xff Mann.\nEine \xc3 Frau.\n");
  for (int threads : {1, 3}) {
    const auto what = message_of<tt::FormatError>([&] { load(src, tgt, {}, threads); });
    CHECK_THAT(what, Catch::StartsWith(tgt + ":2: invalid UTF-8 at byte 5"));
  }
  SECTION("in a later chunk") {
    BigCorpus big(dir, 5000);
    big.en[4321] = "bad \xed\xa0\x80 surrogate";
    const auto en = dir.write("big.en", join_lines(big.en));
    const auto what = message_of<tt::FormatError>([&] { load(en, big.de_path, {}, 4); });
    CHECK_THAT(what, Catch::StartsWith(en + ":4322: invalid UTF-8 at byte 5"));
  }
}

TEST_CASE("a missing file is an IoError naming it", "[data][corpus]") {
  TmpDir dir;
  const auto src = dir.write("m.en", "A dog.\n");
  const auto missing = dir.file("missing.de");
  CHECK_THAT(message_of<tt::IoError>([&] { load(src, missing); }), Catch::Contains(missing));
  CHECK_THAT(message_of<tt::IoError>([&] { load(missing, src); }), Catch::Contains(missing));
}

TEST_CASE("bad options are ConfigErrors", "[data][corpus]") {
  const auto en = tt::test::fixture_path("corpus.en"), de = tt::test::fixture_path("corpus.de");
  CHECK_THROWS_AS(load(en, de, {}, 0), tt::ConfigError);
  CHECK_THROWS_AS(load(en, de, CorpusFilter{0, 0}), tt::ConfigError);
  CHECK_THROWS_AS(load(en, de, CorpusFilter{10, 0.5}), tt::ConfigError);
  CHECK_THROWS_AS(load(en, de, CorpusFilter{10, -1}), tt::ConfigError);
}

TEST_CASE("a SentencePiece model without tt's special ids is refused with a way out", "[data][corpus]") {
  CHECK_NOTHROW(tt::data::require_tt_special_ids(model()));
  TmpDir dir;
  // SentencePiece's own defaults: unk 0, bos 1, eos 2, no pad.
  const std::string prefix = dir.file("plain");
  const std::unordered_map<std::string, std::string> args = {{"input", tt::test::fixture_path("corpus.en")},
                                                             {"model_prefix", prefix},
                                                             {"vocab_size", "100"},
                                                             {"character_coverage", "1.0"},
                                                             {"minloglevel", "2"}};
  auto status = sentencepiece::SentencePieceTrainer::Train(args);
  REQUIRE(status.ok());
  auto plain = SpmTokenizer::load(prefix + ".model");
  REQUIRE(plain.eos_id() == 2);
  try {
    tt::data::require_tt_special_ids(plain);
    FAIL("accepted a model without tt's special ids");
  } catch (const tt::ConfigError& e) {
    CHECK_THAT(std::string(e.what()), Catch::StartsWith(prefix + ".model: ") && Catch::Contains("pad -1, unk 0"));
    CHECK_THAT(e.hint(), Catch::Contains("tt-tokenize train"));
  }
}

TEST_CASE("from_ids stores pairs as given", "[data][corpus]") {
  auto c = ParallelCorpus::from_ids({{5, 6, 3}, {7, 3}}, {{8, 9}, {10}});
  REQUIRE(c.size() == 2);
  CHECK(vec(c.source(0)) == std::vector<int32_t>{5, 6, 3});
  CHECK(vec(c.target(0)) == std::vector<int32_t>{8, 9});
  CHECK(vec(c.source(1)) == std::vector<int32_t>{7, 3});
  CHECK(vec(c.target(1)) == std::vector<int32_t>{10});
  CHECK(c.stats().kept == 2);
  CHECK(c.stats().src_tokens == 5);
  CHECK(c.stats().tgt_tokens == 3);
  CHECK(ParallelCorpus::from_ids({}, {}).size() == 0);
  CHECK_THROWS_AS(ParallelCorpus::from_ids({{1}}, {}), tt::Error);
}
