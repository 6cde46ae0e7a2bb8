// Shared by the tests of products against packed weights (adopted stored weights, workers sharing a packed
// copy): a CPU backend in decoding mode, the Linear layer's product x W^T through it, bit equality.
#pragma once

#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "backend/kernel_fixture.h"

namespace tt::test {

// A CPU backend in row-invariant (decoding) mode at precision p; null where the processor lacks p.
inline std::unique_ptr<backend::Backend> decoding_backend(backend::MatmulPrecision p, int threads = 2) {
  auto be = backend::make_backend("cpu", threads);
  REQUIRE(be->set_row_invariant(true));
  if (!be->set_matmul_precision(p)) return nullptr;
  return be;
}

// x [M, K] times w [N, K]^T, as a Linear layer runs it.
inline std::vector<float> product(backend::Backend& be, const std::vector<float>& x, const tensor::Tensor& w, int M,
                                  int N, int K) {
  auto a = upload(be, x);
  auto c = upload(be, std::vector<float>(size_t(M) * N, 0.0f));
  be.gemm(false, true, M, N, K, 1.0f, a.f32(), K, w.f32(), K, 0.0f, c.f32(), N);
  return c.to_host_f32();
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace tt::test
