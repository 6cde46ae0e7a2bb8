// The decoding kernels on every backend against the double references (support/reference_decode_kernels.h):
// attention of one query per row over row-addressed keys (padded row strides, keys shared and reordered
// through key_rows, per-row key counts, exact zeros past a count, beam-search sizes, a row's bits
// independent of the other rows) and per-row top-k (indices exactly, values bit for bit: ties to the lower
// index, NaN as -inf, signed zeros tie), and the fused log_softmax_topk where a backend fuses it.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "backend/kernel_fixture.h"
#include "conformance/backends_under_test.h"
#include "support/reference_decode_kernels.h"

using namespace tt;
using tt::test::for_each_backend;
using tt::test::random_floats;
using tt::test::random_ids;
using tt::test::require_close;
using tt::test::upload;

namespace {

struct DecodeCase {
  int rows, H, Dh, max_keys, cache_rows;
  int pad = 0;  // extra elements per row of q, k/v and ctx: strides must be honoured
  bool probs = true;
  uint32_t seed = 1;
};

struct DecodeInputs {
  std::vector<float> q, k, v;
  std::vector<int32_t> key_rows, key_counts;
  int64_t ldq, ld, ldc;
};

DecodeInputs make_inputs(const DecodeCase& c) {
  DecodeInputs in;
  const int64_t width = int64_t{c.H} * c.Dh;
  in.ldq = width + c.pad;
  in.ld = width + 2 * c.pad;
  in.ldc = width + 3 * c.pad;
  in.q = random_floats(size_t(c.rows) * in.ldq, c.seed, -2.0f, 2.0f);
  in.k = random_floats(size_t(c.cache_rows) * in.ld, c.seed + 1, -2.0f, 2.0f);
  in.v = random_floats(size_t(c.cache_rows) * in.ld, c.seed + 2);
  // Any cache row may serve any query row (beam hypotheses share prefixes); unused slots hold garbage ids
  // the kernel must not read.
  in.key_rows = random_ids(size_t(c.rows) * c.max_keys, c.seed + 3, 0, c.cache_rows);
  in.key_counts = random_ids(size_t(c.rows), c.seed + 4, 1, c.max_keys + 1);
  in.key_counts[0] = c.max_keys;
  if (c.rows > 1) in.key_counts[1] = 1;
  for (int r = 0; r < c.rows; ++r)
    for (int j = in.key_counts[r]; j < c.max_keys; ++j) in.key_rows[size_t(r) * c.max_keys + j] = 1 << 30;
  return in;
}

struct DecodeOutputs {
  std::vector<float> ctx, probs;
};

DecodeOutputs run_decode(backend::Backend& be, const DecodeCase& c, const DecodeInputs& in, float scale) {
  auto q = upload(be, in.q), k = upload(be, in.k), v = upload(be, in.v);
  auto key_rows = upload(be, in.key_rows), key_counts = upload(be, in.key_counts);
  auto ctx = upload(be, std::vector<float>(size_t(c.rows) * in.ldc, 7.0f));  // 7: padding must stay untouched
  auto probs = upload(be, std::vector<float>(c.probs ? size_t(c.rows) * c.H * c.max_keys : 1, 7.0f));
  be.attention_decode(ctx.f32(), in.ldc, c.probs ? probs.f32() : nullptr, q.f32(), in.ldq, k.f32(), v.f32(), in.ld,
                      key_rows.i32(), key_counts.i32(), c.rows, c.max_keys, c.H, c.Dh, scale);
  return {ctx.to_host_f32(), c.probs ? probs.to_host_f32() : std::vector<float>{}};
}

void check_decode(backend::Backend& be, const DecodeCase& c) {
  INFO("rows " << c.rows << " H " << c.H << " Dh " << c.Dh << " max_keys " << c.max_keys << " pad " << c.pad
               << " probs " << c.probs);
  const DecodeInputs in = make_inputs(c);
  const float scale = 1.0f / std::sqrt(float(c.Dh));
  const DecodeOutputs got = run_decode(be, c, in, scale);
  std::vector<double> ctx(size_t(c.rows) * in.ldc, 7.0);
  std::vector<double> probs(c.probs ? size_t(c.rows) * c.H * c.max_keys : 0);
  reference::attention_decode(ctx.data(), in.ldc, c.probs ? probs.data() : nullptr, in.q.data(), in.ldq,
                              in.k.data(), in.v.data(), in.ld, in.key_rows.data(), in.key_counts.data(), c.rows,
                              c.max_keys, c.H, c.Dh, scale);
  require_close(got.ctx, ctx, 1e-4, 1e-5, "ctx");
  if (!c.probs) return;
  require_close(got.probs, probs, 1e-4, 1e-6, "probs");
  size_t nonzero_past_count = 0;  // past a row's count: exactly 0, not merely tiny
  for (int r = 0; r < c.rows; ++r)
    for (int h = 0; h < c.H; ++h)
      for (int j = in.key_counts[r]; j < c.max_keys; ++j)
        nonzero_past_count += got.probs[(size_t(r) * c.H + h) * c.max_keys + j] != 0.0f;
  CHECK(nonzero_past_count == 0);
}

// topk against the reference: indices exactly, values by their bits (they are copies of x).
void check_topk(backend::Backend& be, const std::vector<float>& x, int64_t rows, int V, int k) {
  INFO("rows " << rows << " V " << V << " k " << k);
  auto tx = upload(be, x), values = upload(be, std::vector<float>(size_t(rows) * k)),
       indices = upload(be, std::vector<int32_t>(size_t(rows) * k, -1));
  be.topk(values.f32(), indices.i32(), tx.f32(), rows, V, k);
  std::vector<double> want_values(size_t(rows) * k);
  std::vector<int32_t> want_indices(size_t(rows) * k);
  reference::topk(want_values.data(), want_indices.data(), x.data(), rows, V, k);
  const auto got_indices = indices.to_host_i32();
  const auto got_values = values.to_host_f32();
  size_t bad = 0;
  std::ostringstream first;
  for (size_t i = 0; i < got_indices.size(); ++i) {
    const float want = x[size_t(i / k) * V + size_t(want_indices[i])];
    const bool same_bits = std::memcmp(&got_values[i], &want, sizeof want) == 0;
    if ((got_indices[i] != want_indices[i] || !same_bits) && bad++ < 5)
      first << "  row " << i / k << " place " << i % k << ": got " << got_indices[i] << " (" << got_values[i]
            << "), want " << want_indices[i] << " (" << want << ")\n";
  }
  INFO(bad << " of " << got_indices.size() << " places differ:\n" << first.str());
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("attention_decode: padded strides, shared keys, with and without probabilities", "[conformance][decode]") {
  for_each_backend([](backend::Backend& be) {
    check_decode(be, {5, 3, 8, 7, 11, 3, true, 1});
    check_decode(be, {5, 3, 8, 7, 11, 3, false, 2});
    check_decode(be, {1, 1, 1, 1, 1, 0, true, 3});     // one key: ctx == v
    check_decode(be, {4, 2, 33, 40, 50, 1, true, 4});  // Dh not a multiple of a vector or a warp
    check_decode(be, {3, 2, 256, 9, 20, 0, true, 5});  // the largest head dimension CUDA's kernel takes
    // Dh 7: CPU's scalar path; Dh a multiple of 16: its lanes path (H 4 and 8: heads folded four at a
    // time; 6: four, then two alone).
    check_decode(be, {5, 3, 7, 9, 20, 0, true, 6});
    check_decode(be, {5, 4, 32, 9, 20, 0, true, 7});
    check_decode(be, {5, 6, 16, 9, 20, 2, true, 8});
    check_decode(be, {5, 8, 64, 9, 20, 0, false, 9});
  });
}

TEST_CASE("attention_decode at beam-search sizes and past CUDA's default shared-memory limit",
          "[conformance][decode]") {
  for_each_backend([](backend::Backend& be) {
    check_decode(be, {512, 16, 64, 96, 2048, 0, true, 11});  // 512 rows x 16 heads
    check_decode(be, {64, 8, 128, 1024, 4096, 0, true, 12});
    check_decode(be, {32, 16, 64, 1024, 1024, 0, false, 13});
    check_decode(be, {2, 2, 16, 20000, 20000, 0, true, 21});  // 80 KB of scores per CUDA block: opted in
  });
}

TEST_CASE("attention_decode: a row's bits do not depend on the other rows", "[conformance][decode]") {
  for_each_backend([](backend::Backend& be) {
    const DecodeCase all{64, 4, 32, 50, 300, 0, true, 31};
    const DecodeInputs in = make_inputs(all);
    const DecodeOutputs full = run_decode(be, all, in, 0.125f);
    for (int r : {0, 1, 37, 63}) {
      INFO("row " << r);
      DecodeCase one = all;
      one.rows = 1;
      DecodeInputs single = in;
      single.q.assign(in.q.begin() + r * in.ldq, in.q.begin() + (r + 1) * in.ldq);
      single.key_rows.assign(in.key_rows.begin() + r * all.max_keys, in.key_rows.begin() + (r + 1) * all.max_keys);
      single.key_counts = {in.key_counts[r]};
      const DecodeOutputs alone = run_decode(be, one, single, 0.125f);
      CHECK(alone.ctx == std::vector<float>(full.ctx.begin() + r * in.ldc, full.ctx.begin() + (r + 1) * in.ldc));
      const size_t p = size_t(all.H) * all.max_keys;
      CHECK(alone.probs == std::vector<float>(full.probs.begin() + r * p, full.probs.begin() + (r + 1) * p));
    }
  });
}

TEST_CASE("topk: random rows, small to 64k vocabularies, k from 1 to 64", "[conformance][decode]") {
  for_each_backend([](backend::Backend& be) {
    check_topk(be, random_floats(7, 1), 7, 1, 1);          // V == 1
    check_topk(be, random_floats(3 * 17, 2), 3, 17, 17);   // k == V: a full sort
    check_topk(be, random_floats(5 * 1000, 3), 5, 1000, 1);
    check_topk(be, random_floats(256 * 8000, 4, -20.0f, 0.0f), 256, 8000, 8);  // beam 4 x batch 64 scores
    check_topk(be, random_floats(16 * 37000, 5), 16, 37000, 64);
    check_topk(be, random_floats(4 * 65536, 6), 4, 65536, 64);
  });
}

TEST_CASE("topk: ties go to the lower index, NaN ranks as -inf, -0 ties with +0", "[conformance][decode]") {
  for_each_backend([](backend::Backend& be) {
    // Few distinct values: every place of the top k is decided by the index tie-break.
    const std::vector<int32_t> levels = random_ids(64 * 3000, 11, 0, 5);
    const std::vector<float> x(levels.begin(), levels.end());
    for (int k : {1, 5, 63, 700}) check_topk(be, x, 64, 3000, k);

    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const int V = 12;
    const std::vector<float> special = {
        nan,   -inf, 0.0f,  -0.0f, 1.0f,  inf,  nan,   -0.0f, inf,   -inf, -1.0f, 0.0f,  // mixed
        nan,   nan,  nan,   nan,   nan,   nan,  nan,   nan,   nan,   nan,  nan,   nan,   // all NaN: 0, 1, 2, ...
        -inf,  nan,  -inf,  nan,   -3.0f, nan,  -inf,  -inf,  nan,   -inf, nan,   -inf,  // NaN ties with -inf
        -0.0f, 0.0f, -0.0f, 0.0f,  -0.0f, 0.0f, -0.0f, 0.0f,  -0.0f, 0.0f, -0.0f, 0.0f,  // signed zeros tie
    };
    for (int k : {1, 3, 6, 12}) check_topk(be, special, 4, V, k);

    // The mixed row by hand: inf (5), inf (8), 1 (4), then the four zeros in index order.
    auto tx = upload(be, special), values = upload(be, std::vector<float>(7)),
         indices = upload(be, std::vector<int32_t>(7, -1));
    be.topk(values.f32(), indices.i32(), tx.f32(), 1, V, 7);
    CHECK(indices.to_host_i32() == std::vector<int32_t>{5, 8, 4, 2, 3, 7, 11});
    const auto got = values.to_host_f32();
    CHECK(got[0] == inf);
    CHECK(got[2] == 1.0f);
    CHECK(std::signbit(got[4]));  // -0 is returned as stored
  });
}

TEST_CASE("topk: a chunk's NaN does not hide its best value", "[conformance][decode]") {
  for_each_backend([](backend::Backend& be) {
    const int rows = 3, V = 1000;
    auto x = random_floats(size_t(rows) * V, 9, -5, 5);
    x[5] = x[17] = x[800] = 9.0f;  // row 0: a three-way tie for first
    // row 1: one large value late, NaN in the last column of every 64-column chunk a kernel may test
    // (chunks start at column k, k + 64, ... for k = 1, 5, 12)
    for (int c = 0; c < V; ++c) {
      const int m = c % 64;
      x[size_t(V) + c] = c >= 100 && (m == 0 || m == 4 || m == 11) ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
    }
    x[size_t(V) + 901] = 50.0f;
    // row 2: NaN but for one value, so that NaNs share its lane of every register a kernel may test
    for (int c = 0; c < V; ++c) x[size_t(2) * V + c] = c == 901 ? 50.0f : std::numeric_limits<float>::quiet_NaN();
    for (int k : {1, 5, 12}) check_topk(be, x, rows, V, k);
  });
}

TEST_CASE("log_softmax_topk: the bits of log_softmax then topk, logits untouched, where fused",
          "[conformance][decode]") {
  for_each_backend([](backend::Backend& be) {
    if (!be.fuses(backend::Backend::Fused::log_softmax_topk)) return;  // ops/ composes it: nothing to compare
    const int rows = 6, V = 1000, k = 7;
    auto x = random_floats(size_t(rows) * V, 11, -8, 8);
    x[size_t(1) * V + 500] = 30.0f;                                    // row 1: one dominant logit
    for (int c = 0; c < V; ++c) x[size_t(2) * V + c] = float(c % 5);   // row 2: many ties
    x[size_t(3) * V + 10] = std::numeric_limits<float>::quiet_NaN();  // row 3: a NaN (its shift is NaN)
    auto logits = upload(be, x), normalised = upload(be, x);
    be.log_softmax(normalised.f32(), rows, V);
    auto ev = upload(be, std::vector<float>(size_t(rows) * k)), ei = upload(be, std::vector<int32_t>(size_t(rows) * k));
    be.topk(ev.f32(), ei.i32(), normalised.f32(), rows, V, k);
    auto v = upload(be, std::vector<float>(size_t(rows) * k)), i = upload(be, std::vector<int32_t>(size_t(rows) * k));
    auto shift = upload(be, std::vector<float>(rows));
    be.log_softmax_topk(v.f32(), i.i32(), shift.f32(), logits.f32(), rows, V, k);
    REQUIRE(i.to_host_i32() == ei.to_host_i32());
    const auto got = v.to_host_f32(), want = ev.to_host_f32();
    for (size_t j = 0; j < got.size(); ++j) {
      INFO("value " << j);
      REQUIRE((std::isnan(want[j]) ? std::isnan(got[j]) : std::memcmp(&got[j], &want[j], sizeof(float)) == 0));
    }
    const auto s = shift.to_host_f32(), lp = normalised.to_host_f32(), after = logits.to_host_f32();
    for (int r = 0; r < rows; ++r) {
      INFO("row " << r);
      for (int c : {0, 3, 500, V - 1}) {  // any column: logit - shift is its log-probability, bit for bit
        const float a = x[size_t(r) * V + c] - s[size_t(r)], b = lp[size_t(r) * V + c];
        REQUIRE((std::isnan(b) ? std::isnan(a) : std::memcmp(&a, &b, sizeof(float)) == 0));
      }
    }
    REQUIRE(std::memcmp(after.data(), x.data(), x.size() * sizeof(float)) == 0);  // x is left as it was
  });
}
