// bf16 products (Backend::set_matmul_precision) on every backend that offers them: the result is the
// fp32-accumulated product of the operands rounded to bf16 — close to the double reference on rounded
// inputs, and measurably not the fp32 product — on every transpose, padded leading dimensions and
// attention's strided layouts; and fp32 comes back exactly when asked for again.
#include <catch2/catch.hpp>

#include <limits>

#include "backend/kernel_fixture.h"
#include "conformance/backends_under_test.h"
#include "support/bf16.h"
#include "support/reference_kernels.h"

using namespace tt;
using backend::MatrixStrides;
using tt::test::for_each_backend;
using tt::test::for_each_bf16_backend;
using tt::test::random_floats;
using tt::test::require_close;
using tt::test::upload;

namespace {

std::vector<float> rounded(std::vector<float> v) { return tt::test::rounded_bf16(std::move(v)); }

// Largest |a - b| over the elements.
double max_diff(const std::vector<float>& a, const std::vector<double>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

void check_gemm(backend::Backend& be, bool ta, bool tb, int M, int N, int K, float alpha, float beta, int pad) {
  INFO("ta=" << ta << " tb=" << tb << " M=" << M << " N=" << N << " K=" << K << " pad=" << pad);
  const int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
  const auto A = random_floats(static_cast<size_t>((ta ? K : M) * lda), 1);
  const auto B = random_floats(static_cast<size_t>((tb ? N : K) * ldb), 2);
  const auto C0 = random_floats(static_cast<size_t>(M * ldc), 3);
  auto a = upload(be, A), b = upload(be, B), c = upload(be, C0);
  be.gemm(ta, tb, M, N, K, alpha, a.f32(), lda, b.f32(), ldb, beta, c.f32(), ldc);
  const auto A16 = rounded(A), B16 = rounded(B);
  auto expected = tt::test::to_double(C0), exact = expected;
  reference::gemm(ta, tb, M, N, K, alpha, A16.data(), lda, B16.data(), ldb, beta, expected.data(), ldc);
  reference::gemm(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, exact.data(), ldc);
  const auto got = c.to_host_f32();
  require_close(got, expected, 1e-5, 1e-5 * K, "bf16 gemm");  // padding columns included: untouched
  CHECK(max_diff(got, exact) > 1e-4);                          // the operands really were rounded to bf16
}

}  // namespace

TEST_CASE("bf16 gemm is the fp32 product of bf16-rounded operands, on every transpose", "[conformance][gemm][bf16]") {
  for_each_bf16_backend([](backend::Backend& be) {
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        check_gemm(be, ta, tb, 17, 33, 19, 1.0f, 0.0f, 0);
        check_gemm(be, ta, tb, 65, 3, 130, -2.0f, 0.25f, 1);
        check_gemm(be, ta, tb, 129, 100, 67, 1.0f, 1.0f, 5);
        check_gemm(be, ta, tb, 512, 384, 512, 1.0f, 0.0f, 0);  // tensor-core sized and aligned
      }
  });
}

TEST_CASE("bf16 gemm_batched runs attention products on the strided B,T,H,Dh layout", "[conformance][gemm][bf16]") {
  for_each_bf16_backend([](backend::Backend& be) {
    const int B = 3, H = 4, Tq = 17, Tk = 13, Dh = 12;
    const auto Q = random_floats(static_cast<size_t>(B) * Tq * H * Dh, 11);
    const auto K = random_floats(static_cast<size_t>(B) * Tk * H * Dh, 12);
    const auto C0 = random_floats(static_cast<size_t>(B) * Tq * H * Dh, 14);
    auto q = upload(be, Q), k = upload(be, K);
    const MatrixStrides qs{int64_t{Tq} * H * Dh, Dh, int64_t{H} * Dh};
    const MatrixStrides ks{int64_t{Tk} * H * Dh, Dh, int64_t{H} * Dh};
    const MatrixStrides ss{int64_t{H} * Tq * Tk, int64_t{Tq} * Tk, Tk};
    const auto Q16 = rounded(Q), K16 = rounded(K);
    for (int use = 0; use < 2; ++use) {  // the second use runs the cached primitive or plan
      INFO("use " << use);
      // scores [B, H, Tq, Tk]: one batch stride describes C
      auto s = upload(be, std::vector<float>(static_cast<size_t>(B) * H * Tq * Tk, 0.0f));
      be.gemm_batched(false, true, B, H, Tq, Tk, Dh, 0.25f, q.f32(), qs, k.f32(), ks, 0.0f, s.f32(), ss);
      std::vector<double> expected(static_cast<size_t>(B) * H * Tq * Tk, 0.0), exact = expected;
      reference::gemm_batched(false, true, B, H, Tq, Tk, Dh, 0.25, Q16.data(), qs, K16.data(), ks, 0.0,
                              expected.data(), ss);
      reference::gemm_batched(false, true, B, H, Tq, Tk, Dh, 0.25, Q.data(), qs, K.data(), ks, 0.0, exact.data(), ss);
      const auto scores = s.to_host_f32();
      require_close(scores, expected, 1e-5, 1e-5 * Dh, "scores");
      CHECK(max_diff(scores, exact) > 1e-4);

      // context (beta 1) into the interleaved [B, Tq, H, Dh] layout
      const auto P = random_floats(static_cast<size_t>(B) * H * Tq * Tk, 13);
      const auto P16 = rounded(P);
      auto p = upload(be, P), c = upload(be, C0);
      be.gemm_batched(false, false, B, H, Tq, Dh, Tk, 1.0f, p.f32(), ss, k.f32(), ks, 1.0f, c.f32(), qs);
      auto ctx = tt::test::to_double(C0);
      reference::gemm_batched(false, false, B, H, Tq, Dh, Tk, 1.0, P16.data(), ss, K16.data(), ks, 1.0, ctx.data(),
                              qs);
      require_close(c.to_host_f32(), ctx, 1e-5, 1e-5 * Tk, "context");

      // dK = P^T Q (transposed A, beta 0) into interleaved heads: C's old values (NaN here) are not read
      auto dk = upload(be, std::vector<float>(K.size(), std::numeric_limits<float>::quiet_NaN()));
      be.gemm_batched(true, false, B, H, Tk, Dh, Tq, 1.0f, p.f32(), ss, q.f32(), qs, 0.0f, dk.f32(), ks);
      std::vector<double> dke(K.size(), 0.0);
      reference::gemm_batched(true, false, B, H, Tk, Dh, Tq, 1.0, P16.data(), ss, Q16.data(), qs, 0.0, dke.data(),
                              ks);
      require_close(dk.to_host_f32(), dke, 1e-5, 1e-5 * Tq, "dK");
    }
  });
}

TEST_CASE("fp32 products come back exactly after bf16 ones", "[conformance][gemm][bf16]") {
  for_each_backend([](backend::Backend& be) {
    CHECK(be.matmul_precision() == backend::MatmulPrecision::fp32);
    const int M = 33, N = 20, K = 70;
    const auto A = random_floats(size_t(M) * K, 5), B = random_floats(size_t(K) * N, 6);
    auto a = upload(be, A), b = upload(be, B);
    auto product = [&] {
      auto c = upload(be, std::vector<float>(size_t(M) * N, 0.0f));
      be.gemm(false, false, M, N, K, 1.0f, a.f32(), K, b.f32(), N, 0.0f, c.f32(), N);
      return c.to_host_f32();
    };
    const auto fp32 = product();
    if (!be.set_matmul_precision(backend::MatmulPrecision::bf16)) return;  // fp32 only: nothing to come back from
    CHECK(max_diff(product(), tt::test::to_double(fp32)) > 1e-4);
    REQUIRE(be.set_matmul_precision(backend::MatmulPrecision::fp32));
    CHECK(be.matmul_precision() == backend::MatmulPrecision::fp32);
    CHECK(product() == fp32);
  });
}
