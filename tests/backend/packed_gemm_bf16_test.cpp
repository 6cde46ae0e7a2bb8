// bf16 products against packed weights (backend/cpu/packed_gemm.h, tt-translate --compute-type bf16): the
// result is the float32-summed product of the bf16-rounded operands, on every shape edge (tail tile, tail
// block), and a row's bits do not depend on the other rows or the thread count. On a processor without
// bf16 instructions (the suite's DNNL_MAX_CPU_ISA=AVX2 run) the precision is refused instead.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "backend/backend.h"
#include "backend/kernel_fixture.h"
#include "support/bf16.h"

using namespace tt;
using tt::test::random_floats;
using tt::test::upload;

namespace {

using tt::test::round_bf16;

// C = A B^T in double, optionally on bf16-rounded operands.
std::vector<double> reference(const std::vector<float>& x, const std::vector<float>& w, int M, int N, int K,
                              bool rounded) {
  std::vector<double> y(size_t(M) * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double acc = 0;
      for (int k = 0; k < K; ++k) {
        const float a = x[size_t(m) * K + k], b = w[size_t(n) * K + k];
        acc += rounded ? double(round_bf16(a)) * round_bf16(b) : double(a) * b;
      }
      y[size_t(m) * N + n] = acc;
    }
  return y;
}

// The product on a fresh CPU backend in decoding mode with bf16 products; empty when bf16 is refused.
std::vector<float> bf16_product(int threads, const std::vector<float>& x, const std::vector<float>& w, int M, int N,
                                int K) {
  auto be = backend::make_backend("cpu", threads);
  REQUIRE(be->set_row_invariant(true));
  if (!be->set_matmul_precision(backend::MatmulPrecision::bf16)) return {};
  auto a = upload(*be, x), b = upload(*be, w);
  auto c = upload(*be, std::vector<float>(size_t(M) * N, 7.0f));
  be->gemm(false, true, M, N, K, 1.0f, a.f32(), K, b.f32(), K, 0.0f, c.f32(), N);
  return c.to_host_f32();
}

double relative_error(const std::vector<float>& got, const std::vector<double>& want) {
  double err = 0, norm = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    err += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return std::sqrt(err / norm);
}

bool cpu_has_bf16() {
  const std::string isa = backend::make_backend("cpu", 1)->matmul_isa();
  return isa.find("bf16") != std::string::npos || isa.find("amx") != std::string::npos;
}

}  // namespace

TEST_CASE("bf16 row-invariant gemm is the float32 sum of bf16-rounded operands", "[backend][gemm][bf16]") {
  const int M = 37, N = 300, K = 96;  // a 5-row tail tile and a 44-column tail block
  const auto x = random_floats(size_t(M) * K, 51, -3, 3), w = random_floats(size_t(N) * K, 52, -0.5, 0.5);
  const auto got = bf16_product(2, x, w, M, N, K);
  if (!cpu_has_bf16()) {
    CHECK(got.empty());  // refused where oneDNN has no bf16 instructions
    return;
  }
  REQUIRE(got.size() == size_t(M) * N);
  // Within float32 summation error of the rounded operands' product ...
  CHECK(relative_error(got, reference(x, w, M, N, K, true)) < 1e-6);
  // ... which is visibly not the float32 product (bf16 keeps 8 significant bits).
  const double vs_fp32 = relative_error(got, reference(x, w, M, N, K, false));
  CHECK(vs_fp32 > 1e-4);
  CHECK(vs_fp32 < 1e-2);
}

TEST_CASE("bf16 row-invariant gemm: a row's bits do not depend on M or the thread count", "[backend][gemm][bf16]") {
  const int M = 150, N = 512, K = 256;  // 18 tiles of 8 and a padded 6-row tail
  const auto x = random_floats(size_t(M) * K, 53), w = random_floats(size_t(N) * K, 54);
  const auto all = bf16_product(2, x, w, M, N, K);
  if (all.empty()) {
    CHECK_FALSE(cpu_has_bf16());
    return;
  }
  REQUIRE(bf16_product(1, x, w, M, N, K) == all);
  for (int m : {0, 17, 63, 64, 127, 128, 149}) {
    std::vector<float> row(x.begin() + m * K, x.begin() + (m + 1) * K);
    const auto alone = bf16_product(2, row, w, 1, N, K);
    REQUIRE(std::equal(alone.begin(), alone.end(), all.begin() + m * N));
  }
}
