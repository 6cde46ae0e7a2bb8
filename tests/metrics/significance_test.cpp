// Paired tests and bootstrap intervals refuse a resample count below 1 (it used to index scores[-1]),
// and work with the smallest valid count.
#include <catch2/catch.hpp>

#include "metrics/bleu.h"
#include "metrics/significance.h"
#include "util/error.h"

using namespace tt::metrics;

namespace {
std::vector<double> stats_for(const Bleu& bleu, const std::vector<std::string>& hyps,
                              const std::vector<std::string>& refs) {
  return corpus_stats(bleu, hyps, {refs}, 1);
}
}  // namespace

TEST_CASE("a resample count below 1 is a ConfigError, not a crash", "[metrics]") {
  Bleu bleu;
  const std::vector<std::string> refs{"the cat sat on the mat", "a dog barked"};
  const std::vector<std::string> hyp_a{"the cat sat on a mat", "a dog barked"};
  const std::vector<std::string> hyp_b{"a cat sat", "the dog barked loudly"};
  auto a = stats_for(bleu, hyp_a, refs), b = stats_for(bleu, hyp_b, refs);
  for (int n : {0, -1, -1000}) {
    INFO("n_samples " << n);
    CHECK_THROWS_AS(bootstrap_confidence(bleu, a, 2, n, 12345), tt::ConfigError);
    CHECK_THROWS_AS(paired_test(bleu, {a, b}, 2, PairedTest::bootstrap, n, 12345), tt::ConfigError);
    CHECK_THROWS_AS(paired_test(bleu, {a, b}, 2, PairedTest::randomization, n, 12345), tt::ConfigError);
  }
  // One resample is the smallest valid count: the interval of a single score has zero width.
  auto [mean, ci] = bootstrap_confidence(bleu, a, 2, 1, 12345);
  CHECK(ci == 0.0);
  CHECK(mean >= 0.0);
  auto results = paired_test(bleu, {a, b}, 2, PairedTest::bootstrap, 1, 12345);
  REQUIRE(results.size() == 2);
  CHECK(results[1].p_value.has_value());
}
