// Row-invariant mode (decoding): each output row's bits depend on that row alone, not on the number of
// rows, the thread count or zero-weight key padding — what makes tt-translate batch-size invariant.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <oneapi/dnnl/dnnl.h>

#include "backend/backend.h"
#include "backend/kernel_fixture.h"
#include "support/reference_kernels.h"

using namespace tt;
using tt::test::random_floats;
using tt::test::upload;

namespace {

// Rows [M, N] of x W^T (the Linear layer's product) on a backend with `threads` threads.
std::vector<float> linear_rows(int threads, const std::vector<float>& x, const std::vector<float>& w, int M, int N,
                               int K, bool invariant,
                               backend::MatmulPrecision precision = backend::MatmulPrecision::fp32) {
  auto be = backend::make_backend("cpu", threads);
  REQUIRE(be->set_row_invariant(invariant));
  REQUIRE(be->set_matmul_precision(precision));
  auto a = upload(*be, x), b = upload(*be, w);
  auto c = upload(*be, std::vector<float>(static_cast<size_t>(M) * N, 0.0f));
  be->gemm(false, true, M, N, K, 1.0f, a.f32(), K, b.f32(), K, 0.0f, c.f32(), N);
  return c.to_host_f32();
}

}  // namespace

TEST_CASE("row-invariant gemm: a row's bits do not depend on M or the thread count", "[backend][gemm]") {
  // bf16 too where the CPU has it: on an AMX Xeon its K = 2048 kernels once took their blocking from the
  // backend's thread count.
  using backend::MatmulPrecision;
  const bool has_bf16 = backend::make_backend("cpu", 1)->set_matmul_precision(MatmulPrecision::bf16);
  for (MatmulPrecision precision : {MatmulPrecision::fp32, MatmulPrecision::bf16})
    for (auto [N, K] : {std::pair{64, 32}, std::pair{300, 512}, std::pair{515, 2048}, std::pair{315, 2048}}) {
      if (precision == MatmulPrecision::bf16 && !has_bf16) continue;
      const double margin = precision == MatmulPrecision::bf16 ? 1e-2 * std::sqrt(K) : 1e-4 * K;
      const int max_rows = 150;
      auto x = random_floats(static_cast<size_t>(max_rows) * K, 11);
      auto w = random_floats(static_cast<size_t>(N) * K, 12);
      // Reference: each row alone (M = 1, one thread).
      std::vector<float> alone(static_cast<size_t>(max_rows) * N);
      for (int r = 0; r < max_rows; ++r) {
        std::vector<float> row(x.begin() + r * K, x.begin() + (r + 1) * K);
        auto y = linear_rows(1, row, w, 1, N, K, true, precision);
        std::copy(y.begin(), y.end(), alone.begin() + static_cast<size_t>(r) * N);
      }
      for (int threads : {1, 2, 3})
        for (int M : {2, 7, 16, 17, 64, 79, 80, 150}) {
          auto y = linear_rows(threads, x, w, M, N, K, true, precision);
          INFO("precision " << static_cast<int>(precision) << " N=" << N << " K=" << K << " M=" << M
                            << " threads=" << threads);
          CHECK(std::memcmp(y.data(), alone.data(), y.size() * sizeof(float)) == 0);
          // and still the right product
          std::vector<double> expected(static_cast<size_t>(M) * N, 0.0);
          reference::gemm(false, true, M, N, K, 1.0f, x.data(), K, w.data(), K, 0.0f, expected.data(), N);
          for (size_t i = 0; i < y.size(); i += 97) CHECK(y[i] == Approx(expected[i]).margin(margin));
        }
    }
}

TEST_CASE("row-invariant gemm: a column's bits do not depend on its block's width or where the block starts",
          "[backend][gemm]") {
  // Dropping the first `first` weight rows moves every column to another place in another block (K = 2048:
  // blocks of 64 float32 columns, 128 bf16; K = 512: 256), and the tail block to another width. float32 and
  // bf16 where oneDNN runs its brgemm kernels (AVX-512 and up; packed_gemm.h keeps 256 columns on AVX2,
  // whose jit gemm gives a column other bits in a block of another width); int8 sums are exact anywhere.
  using backend::MatmulPrecision;
  const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const auto avx512 = static_cast<unsigned>(dnnl_cpu_isa_avx512_core);
  const bool brgemm = (isa & avx512) == avx512;
  for (MatmulPrecision precision : {MatmulPrecision::fp32, MatmulPrecision::bf16, MatmulPrecision::int8})
    for (auto [N, K] : {std::pair{300, 512}, std::pair{515, 2048}}) {
      if (precision != MatmulPrecision::int8 && !brgemm) continue;
      auto be = backend::make_backend("cpu", 2);
      REQUIRE(be->set_row_invariant(true));
      if (!be->set_matmul_precision(precision)) continue;  // bf16 products need AVX512-BF16 or AMX
      const int M = 17;
      auto x = random_floats(static_cast<size_t>(M) * K, 13);
      auto w = random_floats(static_cast<size_t>(N) * K, 14);
      auto product = [&](int first) {
        const int n = N - first;
        auto a = upload(*be, x);
        auto b = upload(*be, std::vector<float>(w.begin() + static_cast<std::ptrdiff_t>(first) * K, w.end()));
        auto c = upload(*be, std::vector<float>(static_cast<size_t>(M) * n, 0.0f));
        be->gemm(false, true, M, n, K, 1.0f, a.f32(), K, b.f32(), K, 0.0f, c.f32(), n);
        return c.to_host_f32();
      };
      const std::vector<float> all = product(0);
      for (int first : {1, 63, 200}) {
        const std::vector<float> rest = product(first);
        const int n = N - first;
        int differing = 0;
        for (size_t m = 0; m < M; ++m)
          for (size_t j = 0; j < static_cast<size_t>(n); ++j)
            differing += std::memcmp(&rest[m * n + j], &all[m * N + first + j], sizeof(float)) != 0;
        INFO("precision " << static_cast<int>(precision) << " N=" << N << " K=" << K << " first=" << first);
        CHECK(differing == 0);
      }
    }
}

TEST_CASE("row-invariant attention products ignore zero-weight key padding", "[backend][gemm]") {
  auto be = backend::make_backend("cpu", 2);
  REQUIRE(be->set_row_invariant(true));
  const int Dh = 16, len = 9;
  auto q = random_floats(3 * Dh, 21);
  auto keys = random_floats(40 * Dh, 22);
  auto probs = random_floats(3 * 40, 23);
  for (int t = 0; t < 3; ++t)
    for (int k = len; k < 40; ++k) probs[static_cast<size_t>(t) * 40 + k] = 0.0f;
  std::vector<std::vector<float>> scores, contexts;
  for (int Tk : {len, 13, 40}) {
    // scores [3, Tk] = q [3, Dh] · keys[:Tk]^T ; context [3, Dh] = probs[:, :Tk] · keys[:Tk]
    auto qd = upload(*be, q), kd = upload(*be, keys), pd = upload(*be, probs);
    auto s = upload(*be, std::vector<float>(3 * static_cast<size_t>(Tk), 0.0f));
    auto c = upload(*be, std::vector<float>(3 * Dh, 0.0f));
    be->gemm_batched(false, true, 1, 1, 3, Tk, Dh, 1.0f, qd.f32(), {0, 0, Dh}, kd.f32(), {0, 0, Dh}, 0.0f, s.f32(),
                     {0, 0, Tk});
    be->gemm_batched(false, false, 1, 1, 3, Dh, Tk, 1.0f, pd.f32(), {0, 0, 40}, kd.f32(), {0, 0, Dh}, 0.0f, c.f32(),
                     {0, 0, Dh});
    auto sh = s.to_host_f32();
    std::vector<float> first(3 * len);
    for (int t = 0; t < 3; ++t)
      std::copy(sh.begin() + t * Tk, sh.begin() + t * Tk + len, first.begin() + t * len);
    scores.push_back(first);
    contexts.push_back(c.to_host_f32());
  }
  CHECK(scores[0] == scores[1]);
  CHECK(scores[0] == scores[2]);
  CHECK(contexts[0] == contexts[1]);
  CHECK(contexts[0] == contexts[2]);
}

TEST_CASE("attention softmax: a row's weights do not depend on the padded key length", "[backend][softmax]") {
  auto be = backend::make_backend("cpu", 1);
  const int len = 11;
  auto x = random_floats(64, 31);
  std::vector<std::vector<float>> rows;
  for (int Tk : {len, 16, 17, 64}) {
    std::vector<float> s(x.begin(), x.begin() + Tk);
    auto d = upload(*be, s);
    auto lengths = upload(*be, std::vector<int32_t>{len});
    be->attention_softmax_forward(d.f32(), lengths.i32(), 1, 1, 1, Tk, 0.5f, false, 0);
    auto h = d.to_host_f32();
    rows.emplace_back(h.begin(), h.begin() + len);
    for (int k = len; k < Tk; ++k) CHECK(h[k] == 0.0f);
  }
  for (size_t i = 1; i < rows.size(); ++i) CHECK(rows[i] == rows[0]);
}
