// Philox4x32-10 known-answer vectors (Random123 kat_vectors) and the philox_uniform contract.
#include <catch2/catch.hpp>

#include <set>

#include "util/rng.h"

using namespace tt::util;

TEST_CASE("philox4x32-10 reproduces the Random123 known-answer vectors", "[util][rng]") {
  Philox4 a = philox4x32(0, 0, 0, 0, 0, 0);
  CHECK(a.v[0] == 0x6627e8d5u);
  CHECK(a.v[1] == 0xe169c58du);
  CHECK(a.v[2] == 0xbc57ac4cu);
  CHECK(a.v[3] == 0x9b00dbd8u);
  Philox4 b = philox4x32(0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu);
  CHECK(b.v[0] == 0x408f276du);
  CHECK(b.v[1] == 0x41c83b0eu);
  CHECK(b.v[2] == 0xa20bc7c6u);
  CHECK(b.v[3] == 0x6d5451fdu);
  // Third Random123 vector: counter = pi digits, key = more pi digits.
  Philox4 c = philox4x32(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u);
  CHECK(c.v[0] == 0xd16cfe09u);
  CHECK(c.v[1] == 0x94fdccebu);
  CHECK(c.v[2] == 0x5001e420u);
  CHECK(c.v[3] == 0x24126ea1u);
}

TEST_CASE("philox_uniform: four values per block, all in 0 to 1, streams differ", "[util][rng]") {
  Philox4 r = philox4x32(5, 0, 9, 0, 42, 0);  // block 5 of stream 9 under seed 42
  for (int k = 0; k < 4; ++k) CHECK(philox_uniform(42, 9, 20 + k) == uniform01(r.v[k]));
  double sum = 0.0;
  std::set<float> distinct;
  for (uint64_t i = 0; i < 100000; ++i) {
    float u = philox_uniform(1, 2, i);
    REQUIRE(u >= 0.0f);
    REQUIRE(u < 1.0f);
    sum += u;
    distinct.insert(u);
  }
  CHECK(sum / 100000 == Approx(0.5).margin(0.005));
  CHECK(distinct.size() > 99000);
  CHECK(philox_uniform(1, 2, 7) != philox_uniform(1, 3, 7));
  CHECK(philox_uniform(1, 2, 7) != philox_uniform(2, 2, 7));
  CHECK(uniform01(0xffffffffu) < 1.0f);
  CHECK(rng_stream(RngPurpose::dropout, 1, 0) != rng_stream(RngPurpose::dropout, 2, 0));
  CHECK(rng_stream(RngPurpose::dropout, 1, 0) != rng_stream(RngPurpose::init, 1, 0));
}

TEST_CASE("dropout draws: eight 16-bit halves per block in word order, uniform, thresholds of p", "[util][rng]") {
  const Philox4 r = philox4x32(5, 0, 9, 0, 42, 0);  // block 5 of stream 9 under seed 42: elements 40 .. 47
  for (int k = 0; k < 4; ++k) {
    CHECK(dropout_draw(42, 9, 40 + 2 * k) == (r.v[k] & 0xFFFFu));
    CHECK(dropout_draw(42, 9, 41 + 2 * k) == r.v[k] >> 16);
  }
  CHECK(dropout_threshold(0.0f) == 0);
  CHECK(dropout_threshold(0.1f) == 6554);  // 6553.6 rounded: p = 0.100006
  CHECK(dropout_threshold(0.5f) == 32768);
  CHECK(dropout_threshold(1.0f) == 65536);
  // About p of the draws fall below the threshold; p = 0 keeps all, p = 1 none.
  int64_t dropped = 0, histogram[16] = {};
  const int64_t n = 200000;
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t d = dropout_draw(3, 4, i);
    REQUIRE(d < 65536);
    ++histogram[d >> 12];
    dropped += !dropout_keep(3, 4, i, 0.1f);
    REQUIRE(dropout_keep(3, 4, i, 0.0f));
    REQUIRE_FALSE(dropout_keep(3, 4, i, 1.0f));
  }
  CHECK(double(dropped) / n == Approx(0.1).margin(0.003));
  for (int64_t h : histogram) CHECK(double(h) / n == Approx(1.0 / 16).margin(0.003));
  CHECK(dropout_draw(3, 4, 9) != dropout_draw(3, 5, 9));
}
