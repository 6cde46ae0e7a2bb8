// CUDA's held bf16 weights: products read the copy made when held, wherever in the parameter buffer the
// weights start (in place where the copy's rows stay 16-byte aligned, converted afresh elsewhere). The bf16
// products' values, on every backend: tests/conformance/gemm_bf16_test.cpp.
#include <catch2/catch.hpp>

#include <vector>

#include "support/bf16.h"
#include "cuda/cuda_fixture.h"
#include "support/reference_kernels.h"

using namespace tt;
using namespace tt::test;

namespace {

std::vector<float> rounded(std::vector<float> v) { return tt::test::rounded_bf16(std::move(v)); }

std::unique_ptr<backend::Backend> bf16_gpu() {
  auto gpu = require_cuda();
  REQUIRE(gpu->set_matmul_precision(backend::MatmulPrecision::bf16));  // every GPU tt builds for (sm_90)
  CHECK(gpu->matmul_precision() == backend::MatmulPrecision::bf16);
  return gpu;
}

}  // namespace

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

