// cuBLAS products against the CPU backend (oneDNN): all transpose combinations, odd sizes, padded leading
// dimensions, alpha/beta, and each batched layout (dense, attention's interleaved heads, broadcast).
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "cuda/cuda_fixture.h"
#include "support/reference_kernels.h"

using namespace tt;
using namespace tt::test;
using backend::MatrixStrides;

namespace {

void check_gemm(backend::Backend& gpu, backend::Backend& cpu, bool ta, bool tb, int M, int N, int K, float alpha,
                float beta) {
  INFO("trans_a " << ta << " trans_b " << tb << " M " << M << " N " << N << " K " << K);
  const int a_rows = ta ? K : M, a_cols = ta ? M : K;
  const int b_rows = tb ? N : K, b_cols = tb ? K : N;
  const int lda = a_cols + 3, ldb = b_cols + 1, ldc = N + 2;  // padded rows must be honoured
  std::vector<float> A = random_floats(size_t(a_rows) * lda, 11);
  std::vector<float> B = random_floats(size_t(b_rows) * ldb, 12);
  std::vector<float> C = random_floats(size_t(M) * ldc, 13);
  DeviceVector<float> dA(gpu, A), dB(gpu, B), dC(gpu, C);
  std::vector<double> want(C.begin(), C.end());
  gpu.gemm(ta, tb, M, N, K, alpha, dA.data(), lda, dB.data(), ldb, beta, dC.data(), ldc);
  cpu.gemm(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
  reference::gemm(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, want.data(), ldc);
  std::vector<float> got = dC.to_host();
  check_close(got, C, 1e-4, 5e-4);     // includes the padding columns, which neither may touch
  check_close(got, want, 1e-4, 5e-4);  // and the double-precision oracle
}

// Elements needed by a [batch1, batch2, rows, cols] operand with strides s.
size_t extent(const MatrixStrides& s, int batch1, int batch2, int rows, int cols) {
  return size_t((batch1 - 1) * s.batch1 + (batch2 - 1) * s.batch2 + (rows - 1) * s.ld + cols);
}

// Dense [batch1, batch2, rows, cols].
MatrixStrides dense(int batch2, int rows, int cols) {
  return {int64_t(batch2) * rows * cols, int64_t(rows) * cols, cols};
}

// Heads interleaved within rows, as attention reads [B, T, H, Dh] projections: [batch1, rows, batch2, cols].
MatrixStrides interleaved(int batch2, int rows, int cols) {
  return {int64_t(rows) * batch2 * cols, cols, int64_t(batch2) * cols};
}

enum class Layout { dense, interleaved };

MatrixStrides make_strides(Layout layout, int batch2, int rows, int cols) {
  return layout == Layout::dense ? dense(batch2, rows, cols) : interleaved(batch2, rows, cols);
}

void check_batched(backend::Backend& gpu, backend::Backend& cpu, bool ta, bool tb, int b1, int b2, int M, int N,
                   int K, MatrixStrides sa, MatrixStrides sb, MatrixStrides sc, float beta) {
  INFO("trans_a " << ta << " trans_b " << tb << " batch " << b1 << "x" << b2 << " M " << M << " N " << N << " K "
                  << K);
  const int a_rows = ta ? K : M, a_cols = ta ? M : K;
  const int b_rows = tb ? N : K, b_cols = tb ? K : N;
  std::vector<float> A = random_floats(extent(sa, b1, b2, a_rows, a_cols), 21);
  std::vector<float> B = random_floats(extent(sb, b1, b2, b_rows, b_cols), 22);
  std::vector<float> C = random_floats(extent(sc, b1, b2, M, N), 23);
  DeviceVector<float> dA(gpu, A), dB(gpu, B), dC(gpu, C);
  gpu.gemm_batched(ta, tb, b1, b2, M, N, K, 0.5f, dA.data(), sa, dB.data(), sb, beta, dC.data(), sc);
  cpu.gemm_batched(ta, tb, b1, b2, M, N, K, 0.5f, A.data(), sa, B.data(), sb, beta, C.data(), sc);
  check_close(dC.to_host(), C, 1e-4, 1e-4);
}

}  // namespace

TEST_CASE("cuda gemm: every transpose combination, odd sizes, padded rows", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      check_gemm(*gpu, *cpu, ta, tb, 17, 33, 65, 0.7f, 0.3f);
      check_gemm(*gpu, *cpu, ta, tb, 1, 1, 1, 1.0f, 0.0f);
      check_gemm(*gpu, *cpu, ta, tb, 130, 3, 257, 1.0f, 1.0f);  // beta 1: accumulation (parameter gradients)
    }
  }
}

TEST_CASE("cuda gemm_batched: dense and interleaved layouts, every transpose combination", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  const int b1 = 3, b2 = 4, M = 5, N = 6, K = 7;
  for (Layout layout : {Layout::dense, Layout::interleaved}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        MatrixStrides sa = make_strides(layout, b2, ta ? K : M, ta ? M : K);
        MatrixStrides sb = make_strides(layout, b2, tb ? N : K, tb ? K : N);
        MatrixStrides sc = make_strides(layout, b2, M, N);
        check_batched(*gpu, *cpu, ta, tb, b1, b2, M, N, K, sa, sb, sc, 0.0f);
        check_batched(*gpu, *cpu, ta, tb, b1, b2, M, N, K, sa, sb, sc, 1.0f);
      }
    }
  }
}

TEST_CASE("cuda gemm_batched: attention shapes (scores and context over [B, T, H, Dh])", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  const int B = 2, H = 3, T = 5, S = 9, Dh = 8;
  // scores[B, H, T, S] = Q K^T with Q [B, T, H, Dh] and K [B, S, H, Dh]
  check_batched(*gpu, *cpu, false, true, B, H, T, S, Dh, interleaved(H, T, Dh), interleaved(H, S, Dh),
                dense(H, T, S), 0.0f);
  // context[B, T, H, Dh] = P V with P [B, H, T, S] and V [B, S, H, Dh]
  check_batched(*gpu, *cpu, false, false, B, H, T, Dh, S, dense(H, T, S), interleaved(H, S, Dh),
                interleaved(H, T, Dh), 0.0f);
  // dV[B, S, H, Dh] += P^T dC
  check_batched(*gpu, *cpu, true, false, B, H, S, Dh, T, dense(H, T, S), interleaved(H, T, Dh),
                interleaved(H, S, Dh), 1.0f);
}

TEST_CASE("cuda gemm_batched: one batch dimension and a broadcast operand", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  const int b1 = 4, M = 3, N = 5, K = 6;
  MatrixStrides sa = {int64_t(M) * K + 2, 0, K};  // gaps between matrices
  MatrixStrides sb = {0, 0, N};                   // the same B for every batch
  MatrixStrides sc = {int64_t(M) * N, 0, N};
  check_batched(*gpu, *cpu, false, false, b1, 1, M, N, K, sa, sb, sc, 0.0f);
  // batch1 == 1: only batch2 counts
  check_batched(*gpu, *cpu, false, false, 1, b1, M, N, K, {0, sa.batch1, K}, {0, 0, N}, {0, sc.batch1, N}, 0.0f);
}
