// BLEU statistics and scores against values printed by sacreBLEU 2.6.0's BLEU class for the same inputs.
#include <catch2/catch.hpp>

#include "metrics/bleu.h"

using namespace tt::metrics;

namespace {
std::vector<double> stats_of(const Bleu& bleu, std::string_view hyp, std::vector<std::string_view> refs) {
  std::vector<double> s(bleu.n_stats());
  bleu.segment_stats(hyp, refs, s.data());
  return s;
}
}  // namespace

TEST_CASE("BLEU counts clip against the per-n-gram maximum over references", "[metrics]") {
  Bleu bleu;
  auto s = stats_of(bleu, "the cat sat on a mat", {"the cat sat on the mat", "a cat is on the mat today"});
  CHECK(s == std::vector<double>{6, 6, 6, 3, 2, 1, 6, 5, 4, 3});
  CHECK(bleu.score(s.data()).score == Approx(56.234132519034915).epsilon(1e-14));
}

TEST_CASE("closest reference length prefers the shorter one on a tie", "[metrics]") {
  Bleu bleu;
  auto s = stats_of(bleu, "a b c d", {"a b c d e f", "a b"});  // distances 2 and 2
  CHECK(s[1] == 2);
  s = stats_of(bleu, "a b c", {"x y z w v", "x y z w v u"});
  CHECK(s[1] == 5);  // the closer one wins
}

TEST_CASE("a hypothesis without 4-gram matches under each smoothing method", "[metrics]") {
  const double correct[4] = {5, 0, 0, 0}, total[4] = {5, 4, 3, 2};
  CHECK(compute_bleu(correct, total, 5, 6, SmoothMethod::exp, {}, false).score ==
        Approx(13.078059222838354).epsilon(1e-13));
  CHECK(compute_bleu(correct, total, 5, 6, SmoothMethod::floor, {}, false).score ==
        Approx(6.5779155448680715).epsilon(1e-13));
  CHECK(compute_bleu(correct, total, 5, 6, SmoothMethod::add_k, {}, false).score ==
        Approx(29.417332617155157).epsilon(1e-13));
  CHECK(compute_bleu(correct, total, 5, 6, SmoothMethod::none, {}, false).score == 0.0);
  auto r = compute_bleu(correct, total, 5, 6, SmoothMethod::floor, {}, true);
  CHECK(r.precisions[1] == Approx(2.5));
  CHECK(r.precisions[3] == Approx(5.0));
}

TEST_CASE("effective order and brevity penalty for a one-word hypothesis", "[metrics]") {
  const double correct[4] = {1, 0, 0, 0}, total[4] = {1, 0, 0, 0};
  auto r = compute_bleu(correct, total, 1, 2, SmoothMethod::exp, {}, true);
  CHECK(r.score == Approx(36.78794411714425).epsilon(1e-13));
  CHECK(r.bp == Approx(0.36787944117144233));
  CHECK(compute_bleu(correct, total, 1, 2, SmoothMethod::exp, {}, false).score < 1e-100);
}

TEST_CASE("empty hypothesis and empty corpus give zero, not an error", "[metrics]") {
  Bleu bleu;
  auto s = stats_of(bleu, "", {"some reference"});
  CHECK(s == std::vector<double>{0, 2, 0, 0, 0, 0, 0, 0, 0, 0});
  CHECK(bleu.score(s.data()).score == 0.0);
  auto corpus = corpus_stats(bleu, {}, {{}});
  CHECK(corpus.empty());
  auto total = sum_stats(corpus, bleu.n_stats());
  CHECK(bleu.score(total.data()).score == 0.0);
  CHECK(bleu.score(total.data()).verbose == "0.0/0.0/0.0/0.0 (BP = 1.000 ratio = 0.000 hyp_len = 0 ref_len = 0)");
}

TEST_CASE("BLEU signature spells sacreBLEU's keys, smoothing value included", "[metrics]") {
  BleuOptions o;
  o.smooth_method = SmoothMethod::floor;
  o.lowercase = true;
  o.tokenizer = Tokenizer::intl;
  Bleu bleu(o);
  CHECK(bleu.signature(SignatureContext{2, 0, 0, ""}).format() ==
        "nrefs:2|case:lc|eff:no|tok:intl|smooth:floor[0.10]|version:2.6.0");
  CHECK(Bleu().signature(SignatureContext{1, 1000, 0, "12345"}).format() ==
        "nrefs:1|bs:1000|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0");
}

TEST_CASE("corpus statistics do not depend on the thread count", "[metrics]") {
  std::vector<std::string> hyps, refs;
  for (int i = 0; i < 3000; ++i) {
    hyps.push_back("line " + std::to_string(i % 17) + " of the test , number " + std::to_string(i));
    refs.push_back("line " + std::to_string(i % 13) + " of a test , number " + std::to_string(i));
  }
  Bleu bleu;
  CHECK(corpus_stats(bleu, hyps, {refs}, 1) == corpus_stats(bleu, hyps, {refs}, 4));
}

TEST_CASE("a segment with more distinct tokens than a 64-bit key packs uses the sort-based path", "[metrics]") {
  std::string ref, hyp;
  for (int i = 0; i < 40000; ++i) ref.append(1, 'w').append(std::to_string(i)).append(1, ' ');
  hyp = ref + "extra";
  Bleu bleu(BleuOptions{false, Tokenizer::none, SmoothMethod::exp, {}, false});
  auto s = stats_of(bleu, hyp, {ref});
  CHECK(s == std::vector<double>{40001, 40000, 40000, 39999, 39998, 39997, 40001, 40000, 39999, 39998});
}
