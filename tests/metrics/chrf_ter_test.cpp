// chrF and TER statistics against values printed by sacreBLEU 2.6.0 for the same inputs.
#include <catch2/catch.hpp>

#include "metrics/chrf.h"
#include "metrics/ter.h"

using namespace tt::metrics;

TEST_CASE("chrF and chrF++ pick the best reference and match sacreBLEU", "[metrics]") {
  std::vector<std::string_view> refs{"the cat sat on the mat", "a cat is on the mat today"};
  Chrf chrf;
  std::vector<double> s(chrf.n_stats());
  chrf.segment_stats("the cat sat on a mat", refs, s.data());
  CHECK(chrf.score(s.data()).score == Approx(65.97965990995549).epsilon(1e-13));
  CHECK(chrf.score(s.data()).name == "chrF2");
  Chrf chrf_pp(ChrfOptions{6, 2, 2, false, false, false});
  std::vector<double> p(chrf_pp.n_stats());
  chrf_pp.segment_stats("the cat sat on a mat", refs, p.data());
  CHECK(p == std::vector<double>{15, 17, 14, 14, 16, 12, 13, 15, 10, 12, 14, 8, 11, 13, 7, 10, 12, 6,
                                 6, 6, 5, 5, 5, 3});
  CHECK(chrf_pp.score(p.data()).score == Approx(67.4443505016402).epsilon(1e-13));
  CHECK(chrf_pp.score(p.data()).name == "chrF2++");
  CHECK(chrf_pp.signature(SignatureContext{}).format() == "nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0");
}

TEST_CASE("chrF of an empty hypothesis is zero", "[metrics]") {
  Chrf chrf;
  std::vector<double> s(chrf.n_stats());
  chrf.segment_stats("", {"abc"}, s.data());
  CHECK(chrf.score(s.data()).score == 0.0);
}

TEST_CASE("TER counts a block shift as one edit and averages reference lengths", "[metrics]") {
  Ter ter;
  std::vector<double> s(2);
  ter.segment_stats("the cat sat on a mat", {"the cat sat on the mat", "a cat is on the mat today"}, s.data());
  CHECK(s == std::vector<double>{1, 6.5});
  CHECK(ter.score(s.data()).score == Approx(15.384615384615385).epsilon(1e-13));
  ter.segment_stats("d e f a b c", {"a b c d e f"}, s.data());
  CHECK(s == std::vector<double>{1, 6});
}

TEST_CASE("TER with empty references", "[metrics]") {
  Ter ter;
  std::vector<double> s(2);
  ter.segment_stats("x y", {""}, s.data());
  CHECK(ter.score(s.data()).score == 100.0);
  ter.segment_stats("", {""}, s.data());
  CHECK(ter.score(s.data()).score == 0.0);
}

TEST_CASE("chrF orders too high to pack use the exact sort-based path", "[metrics]") {
  Chrf chrf(ChrfOptions{10, 6, 2, false, false, false});  // 16 orders: more than a key's order tag holds
  std::vector<double> s(chrf.n_stats());
  chrf.segment_stats("the quick brown fox jumps over the lazy dog , again and again",
                     {"a quick brown fox jumped over lazy dogs again", "the fast brown fox leaps over the lazy dog"},
                     s.data());
  CHECK(s == std::vector<double>{49, 34, 29, 48, 33, 24, 47, 32, 21, 46, 31, 18, 45, 30, 16, 44, 29, 14,
                                 43, 28, 12, 42, 27, 10, 41, 26, 8,  40, 25, 7,  13, 9,  7,  12, 8,  4,
                                 11, 7,  2,  10, 6,  1,  9,  5,  0,  8,  4,  0});
  CHECK(chrf.score(s.data()).score == Approx(39.51472256332777).epsilon(1e-13));
}
