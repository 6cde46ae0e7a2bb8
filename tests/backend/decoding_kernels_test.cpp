// The decoding kernels (attention of one query per row over row-addressed keys; per-row top-k) against
// double-precision references, on every ISA variant this processor runs, and their row invariance.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "backend/cpu/cpu_backend.h"
#include "backend/kernel_fixture.h"
#include "ops/decoding.h"
#include "support/reference_decode_kernels.h"

using namespace tt;
using tt::test::random_floats;
using tt::test::random_ids;
using tt::test::require_close;
using tt::test::upload;

namespace {

struct DecodeCase {
  int rows = 5, H = 3, Dh = 7, max_keys = 9, N = 20;
  std::vector<float> q, k, v;
  std::vector<int32_t> key_rows, key_counts;
  // Dh 7: the scalar path; Dh a multiple of 16: the lanes path (H 4 and 8: heads folded four at a time;
  // 6: four, then two alone).
  explicit DecodeCase(int heads = 3, int head_dim = 7) : H(heads), Dh(head_dim) {
    q = random_floats(size_t(rows) * H * Dh, 1, -2, 2);
    k = random_floats(size_t(N) * H * Dh, 2, -2, 2);
    v = random_floats(size_t(N) * H * Dh, 3);
    key_rows = random_ids(size_t(rows) * max_keys, 4, 0, N);
    key_counts = {1, 9, 4, 9, 6};  // one key only, full rows, partial rows
  }
};

// The shared double-precision reference (also the CUDA tests' oracle).
void reference_attention_decode(std::vector<double>& ctx, std::vector<double>& probs, const DecodeCase& c,
                                double scale) {
  const int D = c.H * c.Dh;
  ctx.assign(size_t(c.rows) * D, 0.0);
  probs.assign(size_t(c.rows) * c.H * c.max_keys, 0.0);
  reference::attention_decode(ctx.data(), D, probs.data(), c.q.data(), D, c.k.data(), c.v.data(), D, c.key_rows.data(),
                              c.key_counts.data(), c.rows, c.max_keys, c.H, c.Dh, scale);
}

std::vector<float> run_attention_decode(backend::Backend& be, const DecodeCase& c, std::vector<float>* probs_out,
                                        int first_row = 0, int rows = -1) {
  if (rows < 0) rows = c.rows;
  const int D = c.H * c.Dh;
  auto q = upload(be, std::vector<float>(c.q.begin() + first_row * D, c.q.begin() + (first_row + rows) * D));
  auto k = upload(be, c.k), v = upload(be, c.v);
  auto key_rows = upload(be, std::vector<int32_t>(c.key_rows.begin() + first_row * c.max_keys,
                                                  c.key_rows.begin() + (first_row + rows) * c.max_keys));
  auto counts = upload(be, std::vector<int32_t>(c.key_counts.begin() + first_row,
                                                c.key_counts.begin() + first_row + rows));
  auto ctx = upload(be, std::vector<float>(size_t(rows) * D, 7.0f));  // garbage: must be overwritten
  auto probs = upload(be, std::vector<float>(size_t(rows) * c.H * c.max_keys, 7.0f));
  be.attention_decode(ctx.f32(), D, probs_out ? probs.f32() : nullptr, q.f32(), D, k.f32(), v.f32(), D,
                      key_rows.i32(), counts.i32(), rows, c.max_keys, c.H, c.Dh, 0.4f);
  if (probs_out) *probs_out = probs.to_host_f32();
  return ctx.to_host_f32();
}

}  // namespace

TEST_CASE("attention_decode matches the reference on every ISA variant, with and without the weights", "[backend][decode]") {
  for (auto [H, Dh] : {std::pair{3, 7}, std::pair{4, 32}, std::pair{6, 16}, std::pair{8, 64}}) {
    const DecodeCase c(H, Dh);
    std::vector<double> ectx, eprobs;
    reference_attention_decode(ectx, eprobs, c, 0.4);
    for (const std::string& isa : backend::cpu::supported_isas()) {
      INFO("isa " << isa << " H " << H << " Dh " << Dh);
      backend::cpu::CpuBackend be(2, isa);
      std::vector<float> probs;
      require_close(run_attention_decode(be, c, &probs), ectx, 1e-5, 1e-6, ("attention_decode ctx " + isa).c_str());
      require_close(probs, eprobs, 1e-5, 1e-7, ("attention_decode probs " + isa).c_str());
      for (int r = 0; r < c.rows; ++r)  // past a row's count: exactly 0, not merely tiny
        for (int h = 0; h < c.H; ++h)
          for (int j = c.key_counts[r]; j < c.max_keys; ++j)
            REQUIRE(probs[(size_t(r) * c.H + h) * c.max_keys + j] == 0.0f);
      require_close(run_attention_decode(be, c, nullptr), ectx, 1e-5, 1e-6, ("attention_decode no probs " + isa).c_str());
    }
  }
}

TEST_CASE("attention_decode: a row's bits do not depend on the other rows or the thread count", "[backend][decode]") {
  for (auto [H, Dh] : {std::pair{3, 7}, std::pair{6, 16}}) {
    const DecodeCase c(H, Dh);
    backend::cpu::CpuBackend one(1), two(2);
    const auto all = run_attention_decode(two, c, nullptr);
    REQUIRE(run_attention_decode(one, c, nullptr) == all);
    const int D = c.H * c.Dh;
    for (int r = 0; r < c.rows; ++r) {
      const auto alone = run_attention_decode(two, c, nullptr, r, 1);
      REQUIRE(std::equal(alone.begin(), alone.end(), all.begin() + r * D));
    }
  }
}

TEST_CASE("topk: best first, ties to the lower index, NaN as -inf, on every ISA variant", "[backend][decode]") {
  const int rows = 5, V = 1000;
  auto x = random_floats(size_t(rows) * V, 9, -5, 5);
  x[5] = x[17] = x[800] = 9.0f;  // row 0: a three-way tie for first
  x[V + 3] = std::numeric_limits<float>::quiet_NaN();  // row 1: NaN never wins
  for (int c = 0; c < V; ++c) x[size_t(2) * V + c] = std::numeric_limits<float>::quiet_NaN();  // row 2: all NaN
  for (int c = 0; c < V; ++c) x[size_t(3) * V + c] = float(c % 7);  // row 3: many ties
  // row 4: one large value late, NaN in the last column of every 64-column chunk the kernel may test
  // (chunks start at column k, k + 64, ... for k = 1, 5, 12): a chunk's NaN must not hide its best value
  for (int c = 0; c < V; ++c) {
    const int m = c % 64;
    x[size_t(4) * V + c] = c >= 100 && (m == 0 || m == 4 || m == 11) ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
  }
  x[size_t(4) * V + 901] = 50.0f;
  for (const std::string& isa : backend::cpu::supported_isas()) {
    backend::cpu::CpuBackend be(2, isa);
    for (int k : {1, 5, 12}) {
      INFO("isa " << isa << " k " << k);
      auto tx = upload(be, x);
      auto values = upload(be, std::vector<float>(size_t(rows) * k)), indices = upload(be, std::vector<int32_t>(size_t(rows) * k));
      be.topk(values.f32(), indices.i32(), tx.f32(), rows, V, k);
      const auto got_v = values.to_host_f32();
      const auto got_i = indices.to_host_i32();
      std::vector<double> ref_v(size_t(rows) * k);
      std::vector<int32_t> ref_i(size_t(rows) * k);
      reference::topk(ref_v.data(), ref_i.data(), x.data(), rows, V, k);
      REQUIRE(got_i == ref_i);
      for (size_t i = 0; i < got_v.size(); ++i) {
        INFO("value " << i);
        REQUIRE((std::isnan(got_v[i]) ? std::isnan(ref_v[i]) : double(got_v[i]) == ref_v[i]));
      }
      if (k >= 3) CHECK((got_i[0] == 5 && got_i[1] == 17 && got_i[2] == 800));
    }
  }
}

TEST_CASE("log_softmax_topk: the bits of log_softmax then topk, logits untouched, on every ISA variant",
          "[backend][decode]") {
  const int rows = 6, V = 1000, k = 7;
  auto x = random_floats(size_t(rows) * V, 11, -8, 8);
  x[size_t(1) * V + 500] = 30.0f;  // row 1: one dominant logit
  for (int c = 0; c < V; ++c) x[size_t(2) * V + c] = float(c % 5);  // row 2: many ties
  x[size_t(3) * V + 10] = std::numeric_limits<float>::quiet_NaN();  // row 3: a NaN (its shift is NaN)
  for (const std::string& isa : backend::cpu::supported_isas()) {
    INFO("isa " << isa);
    backend::cpu::CpuBackend be(2, isa);
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
  }
}

TEST_CASE("log_softmax_topk composed (other backends): log_softmax in place, topk, shift 0", "[backend][decode]") {
  const int rows = 3, V = 300, k = 4;
  const auto x = random_floats(size_t(rows) * V, 12, -4, 4);
  backend::cpu::CpuBackend be(1);
  auto fused_x = upload(be, x), default_x = upload(be, x);
  auto fv = upload(be, std::vector<float>(size_t(rows) * k)), fi = upload(be, std::vector<int32_t>(size_t(rows) * k));
  auto dv = upload(be, std::vector<float>(size_t(rows) * k)), di = upload(be, std::vector<int32_t>(size_t(rows) * k));
  auto fs = upload(be, std::vector<float>(rows)), ds = upload(be, std::vector<float>(rows, 9.0f));
  be.log_softmax_topk(fv.f32(), fi.i32(), fs.f32(), fused_x.f32(), rows, V, k);
  ops::composed_log_softmax_topk(be, dv.f32(), di.i32(), ds.f32(), default_x.f32(), rows, V, k);
  CHECK(di.to_host_i32() == fi.to_host_i32());
  CHECK(dv.to_host_f32() == fv.to_host_f32());
  CHECK(ds.to_host_f32() == std::vector<float>(rows, 0.0f));
  const auto lp = default_x.to_host_f32(), shift = fs.to_host_f32();
  for (int r = 0; r < rows; ++r) CHECK(lp[size_t(r) * V + 7] == x[size_t(r) * V + 7] - shift[size_t(r)]);
}
