// int8 products against packed weights (backend/cpu/packed_gemm.h, --compute-type int8): the result must
// be exactly the worked formula — per-row / per-column symmetric quantization, exact integer sums,
// C = sum * scale_A * scale_B — on every shape edge (tail tile, tail block, zero rows), and a row's bits
// must not depend on the other rows or the thread count.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "backend/backend.h"
#include "backend/cpu/packed_gemm.h"
#include "backend/kernel_fixture.h"

using namespace tt;
using tt::test::random_floats;
using tt::test::upload;

namespace {

// Row r of x [rows, K]: q = round(x * L / max|x_r|) (ties to even), scale = max|x_r| / L.
void quantize(std::vector<int32_t>& q, std::vector<float>& scales, const std::vector<float>& x, int rows, int K,
              int levels) {
  const float top = static_cast<float>(levels);
  q.assign(x.size(), 0);
  scales.assign(static_cast<size_t>(rows), 0.0f);
  for (int r = 0; r < rows; ++r) {
    float absmax = 0.0f;
    for (int k = 0; k < K; ++k) absmax = std::max(absmax, std::fabs(x[size_t(r) * K + k]));
    const float inv = absmax > 0.0f ? top / absmax : 0.0f;
    scales[size_t(r)] = absmax / top;
    for (int k = 0; k < K; ++k)
      q[size_t(r) * K + k] = static_cast<int32_t>(std::max(-top, std::min(top, std::nearbyint(x[size_t(r) * K + k] * inv))));
  }
}

std::vector<float> expected_int8(const std::vector<float>& x, const std::vector<float>& w, int M, int N, int K) {
  std::vector<int32_t> qx, qw;
  std::vector<float> sx, sw;
  quantize(qx, sx, x, M, K, 127);
  // Weights get 7 bits where oneDNN's int8 kernels sum pairs in saturating int16 (no VNNI).
  quantize(qw, sw, w, N, K, backend::cpu::PackedGemm::int8_weight_levels());
  std::vector<float> y(size_t(M) * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      int64_t acc = 0;
      for (int k = 0; k < K; ++k) acc += int64_t{qx[size_t(m) * K + k]} * qw[size_t(n) * K + k];
      y[size_t(m) * N + n] = static_cast<float>(acc) * sx[size_t(m)] * sw[size_t(n)];
    }
  return y;
}

std::vector<float> int8_product(int threads, const std::vector<float>& x, const std::vector<float>& w, int M, int N,
                                int K) {
  auto be = backend::make_backend("cpu", threads);
  REQUIRE(be->set_row_invariant(true));
  REQUIRE(be->set_matmul_precision(backend::MatmulPrecision::int8));
  auto a = upload(*be, x), b = upload(*be, w);
  auto c = upload(*be, std::vector<float>(size_t(M) * N, 7.0f));
  be->gemm(false, true, M, N, K, 1.0f, a.f32(), K, b.f32(), K, 0.0f, c.f32(), N);
  return c.to_host_f32();
}

}  // namespace

TEST_CASE("int8 row-invariant gemm equals the worked quantized product exactly", "[backend][gemm][int8]") {
  const int M = 87, N = 300, K = 96;  // tiles of 64, 16, 4 and a 3-row tail; a 44-column tail block
  auto x = random_floats(size_t(M) * K, 41, -3, 3), w = random_floats(size_t(N) * K, 42, -0.5, 0.5);
  for (int k = 0; k < K; ++k) x[size_t(4) * K + k] = 0.0f;  // an all-zero row: scale 0, output 0
  const auto expected = expected_int8(x, w, M, N, K);
  const auto got = int8_product(2, x, w, M, N, K);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    REQUIRE(got[i] == expected[i]);
  }
  // And close to the fp32 product (the quantization error of this input is about 1 %).
  double err = 0, norm = 0;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double e = 0;
      for (int k = 0; k < K; ++k) e += double(x[size_t(m) * K + k]) * w[size_t(n) * K + k];
      err += (got[size_t(m) * N + n] - e) * (got[size_t(m) * N + n] - e);
      norm += e * e;
    }
  CHECK(std::sqrt(err / norm) < 0.02);
}

TEST_CASE("int8 row-invariant gemm: wide column blocks and a narrow tail block are exact, at any M",
          "[backend][gemm][int8]") {
  // Blocks of PackedGemm::kWideBlockCols and a 4-column tail block; M 85: tiles of 64, 16, 4 rows and a
  // 1-row tail, M 3: one short tile.
  const int N = 4 * backend::cpu::PackedGemm::kWideBlockCols + 4, K = 64;
  for (int M : {85, 3}) {
    INFO("M " << M);
    auto x = random_floats(size_t(M) * K, 51, -3, 3), w = random_floats(size_t(N) * K, 52, -0.5, 0.5);
    CHECK(int8_product(2, x, w, M, N, K) == expected_int8(x, w, M, N, K));
  }
}

// A's rows go to oneDNN shifted to u8 (q + 128, packed_gemm.cpp): the largest activations (q = +-127, u8 255
// and 1) against the largest weights of both signs are where an int16 pair sum would saturate and where a
// wrong shift correction would show.
TEST_CASE("int8 row-invariant gemm: extreme activations and weights of both signs are exact", "[backend][gemm][int8]") {
  const int M = 6, N = 260, K = 64;
  std::vector<float> x(size_t(M) * K), w(size_t(N) * K);
  for (int k = 0; k < K; ++k) {
    x[size_t(0) * K + k] = 1.0f;                        // every element +127
    x[size_t(1) * K + k] = -1.0f;                       // every element -127
    x[size_t(2) * K + k] = k % 2 ? 1.0f : -1.0f;        // alternating
    x[size_t(3) * K + k] = k < 2 ? 1.0f : 0.0f;         // mostly the zero point
  }
  auto rnd = random_floats(size_t(2) * K, 45, -1, 1);
  std::copy(rnd.begin(), rnd.end(), x.begin() + 4 * K);
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      w[size_t(n) * K + k] = n % 4 == 0 ? 1.0f : n % 4 == 1 ? -1.0f : n % 4 == 2 ? (k % 2 ? 1.0f : -1.0f) : float(k % 7) - 3;
  const auto expected = expected_int8(x, w, M, N, K);
  REQUIRE(expected[0] == Approx(float(K)));  // all-ones row times all-ones column: the scales undo the levels
  REQUIRE(int8_product(1, x, w, M, N, K) == expected);
}

TEST_CASE("int8 row-invariant gemm: a row's bits do not depend on M or the thread count", "[backend][gemm][int8]") {
  const int M = 90, N = 512, K = 64;  // tiles of 64, 16, 4, 4 and a 2-row tail
  auto x = random_floats(size_t(M) * K, 43), w = random_floats(size_t(N) * K, 44);
  const auto all = int8_product(2, x, w, M, N, K);
  REQUIRE(int8_product(1, x, w, M, N, K) == all);
  for (int m : {0, 17, 63, 64, 81, 89}) {
    std::vector<float> row(x.begin() + m * K, x.begin() + (m + 1) * K);
    const auto alone = int8_product(2, row, w, 1, N, K);
    REQUIRE(std::equal(alone.begin(), alone.end(), all.begin() + m * N));
  }
}

TEST_CASE("int8 row-invariant gemm: int8_keeps_8_bits says whether a weight needing all 8 bits keeps them",
          "[backend][gemm][int8]") {
  // W = [1, 1/127]: with 8-bit weights 1/127 is one step (q = 1); with 7 bits (step 1/63) it rounds to 0.
  // x = [0, 1] reads only that weight, so y = 1/127 or 0. Native here (VNNI on this suite's machines) and
  // under the suite's DNNL_MAX_CPU_ISA=AVX2 run, where the answer must be false.
  const std::vector<float> y = int8_product(1, {0.0f, 1.0f}, {1.0f, 1.0f / 127}, 1, 1, 2);
  auto be = backend::make_backend("cpu", 1);
  INFO("oneDNN ISA " << be->matmul_isa() << ", y " << y[0]);
  CHECK((y[0] != 0.0f) == be->int8_keeps_8_bits());
  if (be->int8_keeps_8_bits()) CHECK(y[0] == Approx(1.0f / 127));
}
