// The CPU decoding kernels give the same bits on 1 and 2 threads and with AVX2's and AVX-512's register
// widths, and the fused log_softmax_topk the bits of ops/'s composition. Their values against the
// references, on every backend: tests/conformance/decoding_kernels_test.cpp.
#include <catch2/catch.hpp>

#include <string>
#include <tuple>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/kernel_fixture.h"
#include "ops/decoding.h"

using namespace tt;
using tt::test::random_floats;
using tt::test::random_ids;
using tt::test::upload;

namespace {

struct DecodeCase {
  int rows = 5, H = 3, Dh = 7, max_keys = 9, N = 20;
  std::vector<float> q, k, v;
  std::vector<int32_t> key_rows, key_counts;
  // Dh 7: the scalar path; Dh a multiple of 16: the lanes path (H 4 and 8: heads folded four at a time;
  // 6: four, then two alone; with AVX-512, 16 keys folded at a time: keys past 16 take whole and partial
  // groups of 16).
  explicit DecodeCase(int heads = 3, int head_dim = 7, int keys = 9) : H(heads), Dh(head_dim), max_keys(keys) {
    q = random_floats(size_t(rows) * H * Dh, 1, -2, 2);
    k = random_floats(size_t(N) * H * Dh, 2, -2, 2);
    v = random_floats(size_t(N) * H * Dh, 3);
    key_rows = random_ids(size_t(rows) * max_keys, 4, 0, N);
    key_counts = {1, keys, 4, keys, 6};  // one key only, full rows, partial rows
    if (keys > 32) key_counts = {1, keys, 16, 17, 33};
  }
};

std::vector<float> run_attention_decode(backend::Backend& be, const DecodeCase& c) {
  const int D = c.H * c.Dh;
  auto q = upload(be, c.q), k = upload(be, c.k), v = upload(be, c.v);
  auto key_rows = upload(be, c.key_rows), counts = upload(be, c.key_counts);
  auto ctx = upload(be, std::vector<float>(size_t(c.rows) * D));
  be.attention_decode(ctx.f32(), D, nullptr, q.f32(), D, k.f32(), v.f32(), D, key_rows.i32(), counts.i32(), c.rows,
                      c.max_keys, c.H, c.Dh, 0.4f);
  return ctx.to_host_f32();
}

}  // namespace

TEST_CASE("attention_decode gives the same bits on 1 and 2 threads", "[backend][decode]") {
  for (auto [H, Dh] : {std::pair{3, 7}, std::pair{6, 16}}) {
    const DecodeCase c(H, Dh);
    backend::cpu::CpuBackend one(1), two(2);
    CHECK(run_attention_decode(one, c) == run_attention_decode(two, c));
  }
}

TEST_CASE("attention_decode's lanes path gives the same bits with registers of 8 and 16 floats",
          "[backend][decode]") {
  // The avx2 and avx512 variants hold the 16 lanes in two registers or one and must add them in the same
  // tree (both contract to FMA alike; the baseline variant, without FMA, rounds differently).
  const std::vector<std::string> isas = backend::cpu::supported_isas();
  if (isas.size() < 3) {
    WARN("this processor has no AVX-512: the register widths are not compared");
    return;
  }
  for (auto [H, Dh, keys] : {std::tuple{6, 16, 9}, std::tuple{8, 64, 9}, std::tuple{5, 32, 9}, std::tuple{4, 128, 9},
                             std::tuple{8, 64, 45}, std::tuple{3, 32, 40}, std::tuple{2, 48, 35}}) {
    INFO("H " << H << " Dh " << Dh << " keys " << keys);
    const DecodeCase c(H, Dh, keys);
    backend::cpu::CpuBackend avx2(2, "avx2"), avx512(2, "avx512");
    CHECK(run_attention_decode(avx2, c) == run_attention_decode(avx512, c));
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
