// The double references of the decoding kernels (support/reference_decode_kernels.h) on cases worked by
// hand: they are the oracle of the CPU and CUDA kernels, so they are checked themselves.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "support/reference_decode_kernels.h"

using namespace tt;

TEST_CASE("reference attention_decode: softmax over the addressed keys, zeros past the count", "[backend][reference]") {
  // Cache rows (H = 1, Dh = 2, ld 3: one padding column): row 0 k = (1, 0) v = (2, 0); row 1 k = (0, 0)
  // v = (0, 4); row 2 k = (0, 9) v = (5, 5).
  const std::vector<float> k = {1, 0, -7, 0, 0, -7, 0, 9, -7};
  const std::vector<float> v = {2, 0, -7, 0, 4, -7, 5, 5, -7};
  const std::vector<float> q = {1, 0, 3, 0};  // two query rows: (1, 0) and (3, 0)
  // Row 0 attends to cache rows 1, 0 (reordered); row 1 to cache row 2 only (slot 1 is never read).
  const std::vector<int32_t> key_rows = {1, 0, 2, 1 << 30};
  const std::vector<int32_t> key_counts = {2, 1};
  std::vector<double> ctx(6, -1.0), probs(4, -1.0);
  reference::attention_decode(ctx.data(), 3, probs.data(), q.data(), 2, k.data(), v.data(), 3, key_rows.data(),
                              key_counts.data(), 2, 2, 1, 2, 0.5);
  // Row 0: scores 0.5 * (0, 1) -> p = (1, e^0.5) / (1 + e^0.5) over (cache 1, cache 0).
  const double p1 = 1.0 / (1.0 + std::exp(0.5)), p0 = 1.0 - p1;
  CHECK(probs[0] == Approx(p1));
  CHECK(probs[1] == Approx(p0));
  CHECK(ctx[0] == Approx(2 * p0));
  CHECK(ctx[1] == Approx(4 * p1));
  CHECK(ctx[2] == -1.0);  // the padding column is not written
  // Row 1: one key: p = 1, ctx = v of cache row 2, probability past the count exactly 0.
  CHECK(probs[2] == 1.0);
  CHECK(probs[3] == 0.0);
  CHECK(ctx[3] == 5.0);
  CHECK(ctx[4] == 5.0);
}

TEST_CASE("reference topk: best first, ties to the lower index, NaN as -inf, signed zeros tie", "[backend][reference]") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {3, nan, 5, 5, -inf, -0.0f, 0.0f, -1,  // row 0
                                nan, -inf, nan, 2, 2, 2, -inf, 1};    // row 1
  std::vector<double> values(12);
  std::vector<int32_t> indices(12);
  reference::topk(values.data(), indices.data(), x.data(), 2, 8, 6);
  CHECK(std::vector<int32_t>(indices.begin(), indices.begin() + 6) == std::vector<int32_t>{2, 3, 0, 5, 6, 7});
  CHECK(std::vector<int32_t>(indices.begin() + 6, indices.end()) == std::vector<int32_t>{3, 4, 5, 7, 0, 1});
  CHECK(values[0] == 5.0);
  CHECK(std::signbit(values[3]));  // -0 as stored
  CHECK(std::isnan(values[10]));   // NaN ranks as -inf but is returned as stored
  CHECK(values[11] == -inf);
}
