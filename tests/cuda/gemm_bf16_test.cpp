// bf16 products on CUDA (cuBLASLt, tensor cores): the result is the fp32-accumulated product of the
// operands rounded to bf16 — close to the double reference on rounded inputs, and measurably not the fp32
// product — on every transpose, padded leading dimensions, attention's strided layouts (C in place and
// C scattered into interleaved heads, with beta), and held weights read from the copy made when held,
// wherever in the parameter buffer they start.
#include <catch2/catch.hpp>

#include <cstring>
#include <limits>
#include <vector>

#include "support/bf16.h"
#include "cuda/cuda_fixture.h"
#include "support/reference_kernels.h"

using namespace tt;
using namespace tt::test;
using backend::MatrixStrides;

namespace {

std::vector<float> rounded(std::vector<float> v) { return tt::test::rounded_bf16(std::move(v)); }

double max_diff(const std::vector<float>& a, const std::vector<double>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

std::unique_ptr<backend::Backend> bf16_gpu() {
  auto gpu = require_cuda();
  REQUIRE(gpu->set_matmul_precision(backend::MatmulPrecision::bf16));  // every GPU tt builds for (sm_90)
  CHECK(gpu->matmul_precision() == backend::MatmulPrecision::bf16);
  return gpu;
}

void check_gemm(backend::Backend& gpu, bool ta, bool tb, int M, int N, int K, float alpha, float beta, int pad) {
  INFO("ta=" << ta << " tb=" << tb << " M=" << M << " N=" << N << " K=" << K << " pad=" << pad);
  const int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
  const auto A = random_floats(size_t((ta ? K : M) * lda), 1);
  const auto B = random_floats(size_t((tb ? N : K) * ldb), 2);
  const auto C0 = random_floats(size_t(M * ldc), 3);
  DeviceVector<float> a(gpu, A), b(gpu, B), c(gpu, C0);
  gpu.gemm(ta, tb, M, N, K, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
  const auto A16 = rounded(A), B16 = rounded(B);
  std::vector<double> expected(C0.begin(), C0.end()), exact = expected;
  reference::gemm(ta, tb, M, N, K, alpha, A16.data(), lda, B16.data(), ldb, beta, expected.data(), ldc);
  reference::gemm(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, exact.data(), ldc);
  const auto got = c.to_host();
  check_close(got, expected, 1e-5, 1e-5 * K);  // padding columns included: untouched
  CHECK(max_diff(got, exact) > 1e-4);          // the operands really were rounded to bf16
}

}  // namespace

TEST_CASE("cuda bf16 gemm is the fp32 product of bf16-rounded operands, on every transpose", "[cuda]") {
  auto gpu = bf16_gpu();
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      check_gemm(*gpu, ta, tb, 17, 33, 19, 1.0f, 0.0f, 0);
      check_gemm(*gpu, ta, tb, 65, 3, 130, -2.0f, 0.25f, 1);
      check_gemm(*gpu, ta, tb, 129, 100, 67, 1.0f, 1.0f, 5);
      check_gemm(*gpu, ta, tb, 512, 384, 512, 1.0f, 0.0f, 0);  // tensor-core sized and aligned
    }
}

TEST_CASE("cuda bf16 gemm_batched runs attention products on the strided B,T,H,Dh layout", "[cuda]") {
  auto gpu = bf16_gpu();
  const int B = 3, H = 4, Tq = 17, Tk = 13, Dh = 12;
  const auto Q = random_floats(size_t(B) * Tq * H * Dh, 11);
  const auto K = random_floats(size_t(B) * Tk * H * Dh, 12);
  const auto C0 = random_floats(size_t(B) * Tq * H * Dh, 14);
  DeviceVector<float> q(*gpu, Q), k(*gpu, K);
  const MatrixStrides qs{int64_t{Tq} * H * Dh, Dh, int64_t{H} * Dh};
  const MatrixStrides ks{int64_t{Tk} * H * Dh, Dh, int64_t{H} * Dh};
  const MatrixStrides ss{int64_t{H} * Tq * Tk, int64_t{Tq} * Tk, Tk};
  const auto Q16 = rounded(Q), K16 = rounded(K);
  for (int use = 0; use < 2; ++use) {  // the second use runs the cached plan
    INFO("use " << use);
    // scores [B, H, Tq, Tk]: one batch stride describes C, written in place
    DeviceVector<float> s(*gpu, size_t(B) * H * Tq * Tk, 0.0f);
    gpu->gemm_batched(false, true, B, H, Tq, Tk, Dh, 0.25f, q.data(), qs, k.data(), ks, 0.0f, s.data(), ss);
    std::vector<double> expected(size_t(B) * H * Tq * Tk, 0.0), exact = expected;
    reference::gemm_batched(false, true, B, H, Tq, Tk, Dh, 0.25, Q16.data(), qs, K16.data(), ks, 0.0,
                            expected.data(), ss);
    reference::gemm_batched(false, true, B, H, Tq, Tk, Dh, 0.25, Q.data(), qs, K.data(), ks, 0.0, exact.data(), ss);
    const auto scores = s.to_host();
    check_close(scores, expected, 1e-5, 1e-5 * Dh);
    CHECK(max_diff(scores, exact) > 1e-4);

    // context (beta 1) into the interleaved [B, Tq, H, Dh] layout: scattered
    const auto P = random_floats(size_t(B) * H * Tq * Tk, 13);
    const auto P16 = rounded(P);
    DeviceVector<float> p(*gpu, P), c(*gpu, C0);
    gpu->gemm_batched(false, false, B, H, Tq, Dh, Tk, 1.0f, p.data(), ss, k.data(), ks, 1.0f, c.data(), qs);
    std::vector<double> ctx(C0.begin(), C0.end());
    reference::gemm_batched(false, false, B, H, Tq, Dh, Tk, 1.0, P16.data(), ss, K16.data(), ks, 1.0, ctx.data(), qs);
    check_close(c.to_host(), ctx, 1e-5, 1e-5 * Tk);

    // dK = P^T Q (transposed A, beta 0) into interleaved heads: C's old values (NaN here) are not read
    DeviceVector<float> dk(*gpu, K.size(), std::numeric_limits<float>::quiet_NaN());
    gpu->gemm_batched(true, false, B, H, Tk, Dh, Tq, 1.0f, p.data(), ss, q.data(), qs, 0.0f, dk.data(), ks);
    std::vector<double> dke(K.size(), 0.0);
    reference::gemm_batched(true, false, B, H, Tk, Dh, Tq, 1.0, P16.data(), ss, Q16.data(), qs, 0.0, dke.data(), ks);
    check_close(dk.to_host(), dke, 1e-5, 1e-5 * Tq);
  }
}

TEST_CASE("cuda bf16 products read held weights from the copy made when held", "[cuda]") {
  auto gpu = bf16_gpu();
  const int M = 64, N = 48, K = 40;
  const auto A = random_floats(size_t(M) * K, 1);
  // A "parameter buffer" with W at offsets whose bf16 copy keeps rows 16-byte aligned (read in place), and
  // at odd offsets (2- and 4-byte aligned in the copy: converted afresh instead, still bf16), each also
  // as a slice with a padded row stride.
  for (int64_t offset : {int64_t{0}, int64_t{8}, int64_t{10}, int64_t{1}}) {
    const bool in_place = offset % 8 == 0;
    INFO("offset " << offset);
    const auto W = random_floats(size_t(N) * (K + 8) + 16, 2);
    DeviceVector<float> a(*gpu, A), w(*gpu, W);
    for (int64_t ldw : {int64_t{K}, int64_t{K + 8}}) {
      INFO("ldw " << ldw);
      auto product = [&] {
        DeviceVector<float> c(*gpu, size_t(M) * N, 0.0f);
        gpu->gemm(false, true, M, N, K, 1.0f, a.data(), K, w.data() + offset, ldw, 0.0f, c.data(), N);
        return c.to_host();
      };
      const auto before = product();
      std::vector<double> expected(size_t(M) * N, 0.0);
      const auto A16 = rounded(A), W16 = rounded(W);
      reference::gemm(false, true, M, N, K, 1.0, A16.data(), K, W16.data() + offset, ldw, 0.0, expected.data(), N);
      check_close(before, expected, 1e-5, 1e-5 * K);
      gpu->hold_bf16_weights(w.data(), int64_t(W.size()));
      check_close(product(), expected, 1e-5, 1e-5 * K);
      // Changing the values while held breaks the contract on purpose: products read in place still see
      // the copy; the others see the new values (twice the old: bf16 rounding commutes with doubling).
      std::vector<float> W2 = W;
      for (float& x : W2) x *= 2;
      gpu->copy_from_host(w.data(), W2.data(), W2.size() * sizeof(float));
      const auto held = product();
      if (in_place) {
        check_close(held, expected, 1e-5, 1e-5 * K);
      } else {
        for (size_t i = 0; i < held.size(); ++i) REQUIRE(held[i] == Approx(2 * before[i]).epsilon(1e-6).margin(1e-6));
      }
      gpu->release_bf16_weights();
      const auto after = product();
      for (size_t i = 0; i < after.size(); ++i) REQUIRE(after[i] == Approx(2 * before[i]).epsilon(1e-6).margin(1e-6));
      gpu->copy_from_host(w.data(), W.data(), W.size() * sizeof(float));
    }
  }
}

TEST_CASE("cuda bf16 precision is offered, and fp32 comes back exactly", "[cuda]") {
  auto gpu = require_cuda();
  CHECK(gpu->matmul_precision() == backend::MatmulPrecision::fp32);
  const int M = 33, N = 20, K = 70;
  const auto A = random_floats(size_t(M) * K, 5), B = random_floats(size_t(K) * N, 6);
  DeviceVector<float> a(*gpu, A), b(*gpu, B);
  auto product = [&] {
    DeviceVector<float> c(*gpu, size_t(M) * N, 0.0f);
    gpu->gemm(false, false, M, N, K, 1.0f, a.data(), K, b.data(), N, 0.0f, c.data(), N);
    return c.to_host();
  };
  const auto fp32 = product();
  REQUIRE(gpu->set_matmul_precision(backend::MatmulPrecision::bf16));
  const auto bf16 = product();
  CHECK(max_diff(bf16, std::vector<double>(fp32.begin(), fp32.end())) > 1e-4);
  REQUIRE(gpu->set_matmul_precision(backend::MatmulPrecision::fp32));
  CHECK(gpu->matmul_precision() == backend::MatmulPrecision::fp32);
  check_equal(product(), fp32);
}
