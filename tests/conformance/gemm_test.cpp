// gemm and gemm_batched against the double reference on every backend: odd shapes, all transposes,
// alpha/beta, padded leading dimensions, dense and interleaved batched layouts (attention's strided
// [B, T, H, Dh]), broadcast operands, batch 1 and length 1.
#include <catch2/catch.hpp>

#include "backend/kernel_fixture.h"
#include "conformance/backends_under_test.h"
#include "support/reference_kernels.h"

using namespace tt;
using tt::test::for_each_backend;
using tt::test::random_floats;
using tt::test::require_close;
using tt::test::upload;

namespace {

void check_gemm(backend::Backend& be, bool ta, bool tb, int M, int N, int K, float alpha, float beta, int pad) {
  int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
  auto A = random_floats(static_cast<size_t>((ta ? K : M) * lda), 1);
  auto B = random_floats(static_cast<size_t>((tb ? N : K) * ldb), 2);
  auto C0 = random_floats(static_cast<size_t>(M * ldc), 3);
  auto a = upload(be, A), b = upload(be, B), c = upload(be, C0);
  be.gemm(ta, tb, M, N, K, alpha, a.f32(), lda, b.f32(), ldb, beta, c.f32(), ldc);
  auto expected = tt::test::to_double(C0);
  reference::gemm(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, expected.data(), ldc);
  INFO("ta=" << ta << " tb=" << tb << " M=" << M << " N=" << N << " K=" << K << " pad=" << pad);
  require_close(c.to_host_f32(), expected, 1e-5, 1e-5 * K, "gemm");  // padding columns must stay untouched too
}

using backend::MatrixStrides;

// Elements a [batch1, batch2, rows, cols] operand with strides s spans.
size_t extent(const MatrixStrides& s, int batch1, int batch2, int rows, int cols) {
  return size_t((batch1 - 1) * s.batch1 + (batch2 - 1) * s.batch2 + (rows - 1) * s.ld + cols);
}

// Dense [batch1, batch2, rows, cols], or heads interleaved within rows as attention reads [B, T, H, Dh]
// projections: [batch1, rows, batch2, cols].
MatrixStrides strides(bool interleaved, int batch2, int rows, int cols) {
  if (interleaved) return {int64_t(rows) * batch2 * cols, cols, int64_t(batch2) * cols};
  return {int64_t(batch2) * rows * cols, int64_t(rows) * cols, cols};
}

void check_batched(backend::Backend& be, bool ta, bool tb, int b1, int b2, int M, int N, int K, MatrixStrides sa,
                   MatrixStrides sb, MatrixStrides sc, float beta) {
  INFO("ta=" << ta << " tb=" << tb << " batch " << b1 << "x" << b2 << " M=" << M << " N=" << N << " K=" << K);
  auto A = random_floats(extent(sa, b1, b2, ta ? K : M, ta ? M : K), 21);
  auto B = random_floats(extent(sb, b1, b2, tb ? N : K, tb ? K : N), 22);
  auto C0 = random_floats(extent(sc, b1, b2, M, N), 23);
  auto a = upload(be, A), b = upload(be, B), c = upload(be, C0);
  be.gemm_batched(ta, tb, b1, b2, M, N, K, 0.5f, a.f32(), sa, b.f32(), sb, beta, c.f32(), sc);
  auto expected = tt::test::to_double(C0);
  reference::gemm_batched(ta, tb, b1, b2, M, N, K, 0.5, A.data(), sa, B.data(), sb, beta, expected.data(), sc);
  require_close(c.to_host_f32(), expected, 1e-5, 1e-5 * K, "gemm_batched");
}

}  // namespace

TEST_CASE("gemm matches the reference on odd shapes and every transpose", "[conformance][gemm]") {
  for_each_backend([&](backend::Backend& be) {
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        check_gemm(be, ta, tb, 17, 33, 19, 1.0f, 0.0f, 0);
        check_gemm(be, ta, tb, 1, 7, 5, 0.5f, 1.0f, 3);
        check_gemm(be, ta, tb, 65, 1, 130, -2.0f, 0.25f, 1);
        check_gemm(be, ta, tb, 129, 100, 67, 1.0f, 1.0f, 0);
        check_gemm(be, ta, tb, 17, 33, 65, 0.7f, 0.3f, 2);
        check_gemm(be, ta, tb, 1, 1, 1, 1.0f, 0.0f, 0);
        check_gemm(be, ta, tb, 130, 3, 257, 1.0f, 1.0f, 1);  // beta 1: accumulation (parameter gradients)
      }
  });
}

TEST_CASE("gemm with a transposed A on 4 KiB-multiple strides (padded-copy path)", "[conformance][gemm]") {
  for_each_backend([&](backend::Backend& be) {
    check_gemm(be, true, false, 1024, 37, 300, 1.0f, 1.0f, 0);    // lda = 1024: A copied
    check_gemm(be, true, true, 1000, 24, 256, 0.5f, 0.0f, 24);    // lda = 1024 with padding columns
    check_gemm(be, true, false, 37, 1024, 300, 1.0f, 1.0f, 0);    // ldb = 1024: B copied
    check_gemm(be, true, false, 1024, 2048, 257, -1.0f, 0.5f, 0);  // both copied
    check_gemm(be, true, false, 512, 256, 300, 1.0f, 1.0f, 0);    // 2 and 1 KiB strides: not copied
  });
}

TEST_CASE("gemm with beta 0 ignores NaN in C and K == 0 scales C", "[conformance][gemm]") {
  for_each_backend([&](backend::Backend& be) {
    std::vector<float> A(6, 1.0f), B(6, 1.0f), C(4, std::nanf(""));
    auto a = upload(be, A), b = upload(be, B), c = upload(be, C);
    be.gemm(false, false, 2, 2, 3, 1.0f, a.f32(), 3, b.f32(), 2, 0.0f, c.f32(), 2);
    CHECK(c.to_host_f32() == std::vector<float>{3, 3, 3, 3});
    be.gemm(false, false, 2, 2, 0, 1.0f, a.f32(), 3, b.f32(), 2, 0.5f, c.f32(), 2);
    CHECK(c.to_host_f32() == std::vector<float>{1.5f, 1.5f, 1.5f, 1.5f});
  });
}

TEST_CASE("gemm_batched runs attention products on the strided B,T,H,Dh layout", "[conformance][gemm]") {
  for_each_backend([&](backend::Backend& be) {
    struct Case { int B, H, Tq, Tk, Dh; };
    // Each product runs twice: the first use of a shape takes the sgemm loop, the second a oneDNN primitive.
    std::vector<Case> cases;
    for (int use = 0; use < 2; ++use)
      for (Case cs : {Case{2, 3, 5, 7, 8}, Case{1, 1, 1, 1, 4}, Case{3, 4, 17, 13, 12}, Case{1, 2, 1, 9, 16}})
        cases.push_back(cs);
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case cs = cases[i];
      const int use = static_cast<int>(i / 4);
      const int B = cs.B, H = cs.H, Tq = cs.Tq, Tk = cs.Tk, Dh = cs.Dh;
      INFO("use " << use << " B=" << B << " H=" << H << " Tq=" << Tq << " Tk=" << Tk << " Dh=" << Dh);
      auto Q = random_floats(static_cast<size_t>(B) * Tq * H * Dh, 11);
      auto K = random_floats(static_cast<size_t>(B) * Tk * H * Dh, 12);
      auto q = upload(be, Q), k = upload(be, K);
      // scores[b, h] = scale * Q[b, :, h, :] * K[b, :, h, :]^T, written to [B, H, Tq, Tk].
      backend::MatrixStrides qs{int64_t{Tq} * H * Dh, Dh, int64_t{H} * Dh};
      backend::MatrixStrides ks{int64_t{Tk} * H * Dh, Dh, int64_t{H} * Dh};
      backend::MatrixStrides ss{int64_t{H} * Tq * Tk, int64_t{Tq} * Tk, Tk};
      auto s = upload(be, std::vector<float>(static_cast<size_t>(B) * H * Tq * Tk, 0.0f));
      be.gemm_batched(false, true, B, H, Tq, Tk, Dh, 0.25f, q.f32(), qs, k.f32(), ks, 0.0f, s.f32(), ss);
      std::vector<double> expected(static_cast<size_t>(B) * H * Tq * Tk, 0.0);
      reference::gemm_batched(false, true, B, H, Tq, Tk, Dh, 0.25, Q.data(), qs, K.data(), ks, 0.0, expected.data(),
                              ss);
      require_close(s.to_host_f32(), expected, 1e-5, 1e-5 * Dh, "scores");

      // context[b, :, h, :] = P[b, h] * V[b, :, h, :], accumulated (beta 1) into [B, Tq, H, Dh].
      auto P = random_floats(static_cast<size_t>(B) * H * Tq * Tk, 13);
      auto C0 = random_floats(static_cast<size_t>(B) * Tq * H * Dh, 14);
      auto p = upload(be, P), c = upload(be, C0);
      be.gemm_batched(false, false, B, H, Tq, Dh, Tk, 1.0f, p.f32(), ss, k.f32(), ks, 1.0f, c.f32(), qs);
      auto ctx = tt::test::to_double(C0);
      reference::gemm_batched(false, false, B, H, Tq, Dh, Tk, 1.0, P.data(), ss, K.data(), ks, 1.0, ctx.data(), qs);
      require_close(c.to_host_f32(), ctx, 1e-5, 1e-5 * Tk, "context");

      // dQ-style product with a transposed A: dK[b, :, h, :] = dS[b, h]^T * Q[b, :, h, :].
      auto dk = upload(be, std::vector<float>(K.size(), 0.0f));
      be.gemm_batched(true, false, B, H, Tk, Dh, Tq, 1.0f, p.f32(), ss, q.f32(), qs, 0.0f, dk.f32(), ks);
      std::vector<double> dke(K.size(), 0.0);
      reference::gemm_batched(true, false, B, H, Tk, Dh, Tq, 1.0, P.data(), ss, Q.data(), qs, 0.0, dke.data(), ks);
      require_close(dk.to_host_f32(), dke, 1e-5, 1e-5 * Tq, "dK");
    }
  });
}

TEST_CASE("gemm_batched with a broadcast (zero-stride) operand falls back and stays exact", "[conformance][gemm]") {
  for_each_backend([&](backend::Backend& be) {
    const int b1 = 2, b2 = 3, M = 5, N = 4, K = 6;
    auto A = random_floats(static_cast<size_t>(b1) * b2 * M * K, 21);
    auto B = random_floats(static_cast<size_t>(K) * N, 22);  // one B shared by all matrices
    backend::MatrixStrides as{int64_t{b2} * M * K, int64_t{M} * K, K}, bs{0, 0, N},
        cs{int64_t{b2} * M * N, int64_t{M} * N, N};
    auto a = upload(be, A), b = upload(be, B);
    auto c = upload(be, std::vector<float>(static_cast<size_t>(b1) * b2 * M * N, 0.0f));
    be.gemm_batched(false, false, b1, b2, M, N, K, 1.0f, a.f32(), as, b.f32(), bs, 0.0f, c.f32(), cs);
    std::vector<double> expected(static_cast<size_t>(b1) * b2 * M * N, 0.0);
    reference::gemm_batched(false, false, b1, b2, M, N, K, 1.0, A.data(), as, B.data(), bs, 0.0, expected.data(), cs);
    require_close(c.to_host_f32(), expected, 1e-5, 1e-4, "broadcast");
  });
}

TEST_CASE("gemm_batched reuses its cached primitive on new buffers", "[conformance][gemm]") {
  for_each_backend([&](backend::Backend& be) {
    const int b1 = 2, b2 = 2, M = 3, N = 5, K = 4;
    backend::MatrixStrides as{int64_t{b2} * M * K, int64_t{M} * K, K}, bs{int64_t{b2} * K * N, int64_t{K} * N, N},
        cs{int64_t{b2} * M * N, int64_t{M} * N, N};
    for (uint32_t round = 0; round < 3; ++round) {  // same key every round; fresh pointers and values
      auto A = random_floats(size_t(b1) * b2 * M * K, 30 + round);
      auto B = random_floats(size_t(b1) * b2 * K * N, 40 + round);
      auto a = upload(be, A), b = upload(be, B);
      auto c = upload(be, std::vector<float>(size_t(b1) * b2 * M * N, 1.0f));
      be.gemm_batched(false, false, b1, b2, M, N, K, 2.0f, a.f32(), as, b.f32(), bs, 0.5f, c.f32(), cs);
      std::vector<double> expected(size_t(b1) * b2 * M * N, 1.0);
      reference::gemm_batched(false, false, b1, b2, M, N, K, 2.0, A.data(), as, B.data(), bs, 0.5, expected.data(), cs);
      INFO("round " << round);
      require_close(c.to_host_f32(), expected, 1e-5, 1e-5, "cached matmul");
    }
  });
}

TEST_CASE("gemm_batched: dense and interleaved layouts on every transpose, one batch dimension",
          "[conformance][gemm]") {
  for_each_backend([&](backend::Backend& be) {
    const int b1 = 3, b2 = 4, M = 5, N = 6, K = 7;
    for (bool interleaved : {false, true})
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          INFO("interleaved " << interleaved);
          const MatrixStrides sa = strides(interleaved, b2, ta ? K : M, ta ? M : K),
                              sb = strides(interleaved, b2, tb ? N : K, tb ? K : N),
                              sc = strides(interleaved, b2, M, N);
          check_batched(be, ta, tb, b1, b2, M, N, K, sa, sb, sc, 0.0f);
          check_batched(be, ta, tb, b1, b2, M, N, K, sa, sb, sc, 1.0f);
        }
    // One batch dimension with gaps between A's matrices and one B for all; then batch1 == 1.
    const MatrixStrides sa{int64_t(M) * K + 2, 0, K}, sb{0, 0, N}, sc{int64_t(M) * N, 0, N};
    check_batched(be, false, false, 4, 1, M, N, K, sa, sb, sc, 0.0f);
    check_batched(be, false, false, 1, 4, M, N, K, {0, sa.batch1, K}, {0, 0, N}, {0, sc.batch1, N}, 0.0f);
  });
}
