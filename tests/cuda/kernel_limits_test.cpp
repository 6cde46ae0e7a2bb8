// The limits of CUDA's decoding kernels: the largest k topk takes gives the reference's picks, one more is
// refused with tt::Error, and so is a head dimension past attention_decode's. Their values on every
// backend: tests/conformance/decoding_kernels_test.cpp.
#include <catch2/catch.hpp>

#include <vector>

#include "cuda/cuda_fixture.h"
#include "support/reference_decode_kernels.h"
#include "util/error.h"

using namespace tt;
using namespace tt::test;

TEST_CASE("cuda topk: k up to 4096 gives the reference's picks, beyond is refused with tt::Error", "[cuda]") {
  auto gpu = require_cuda();
  const int rows = 2, V = 5000;
  const std::vector<float> x = random_floats(size_t(rows) * V, 7);
  DeviceVector<float> dx(*gpu, x), dvalues(*gpu, size_t(rows) * V, 0.0f);
  DeviceVector<int32_t> dindices(*gpu, size_t(rows) * V, -1);
  const int k = 4096;
  gpu->topk(dvalues.data(), dindices.data(), dx.data(), rows, V, k);
  std::vector<double> want_values(size_t(rows) * k);
  std::vector<int32_t> want_indices(size_t(rows) * k);
  reference::topk(want_values.data(), want_indices.data(), x.data(), rows, V, k);
  std::vector<int32_t> got = dindices.to_host();
  got.resize(size_t(rows) * k);
  CHECK(got == want_indices);
  CHECK_THROWS_AS(gpu->topk(dvalues.data(), dindices.data(), dx.data(), 1, V, k + 1), Error);
}

TEST_CASE("cuda attention_decode: a head dimension beyond the kernel's is refused with tt::Error", "[cuda]") {
  auto gpu = require_cuda();
  const int Dh = 257;
  DeviceVector<float> q(*gpu, size_t(Dh), 0.5f), kv(*gpu, size_t(2) * Dh, 0.5f), ctx(*gpu, size_t(Dh), 0.0f);
  DeviceVector<int32_t> key_rows(*gpu, std::vector<int32_t>{0, 1}), key_counts(*gpu, std::vector<int32_t>{2});
  CHECK_THROWS_AS(gpu->attention_decode(ctx.data(), Dh, nullptr, q.data(), Dh, kv.data(), kv.data(), Dh,
                                        key_rows.data(), key_counts.data(), 1, 2, 1, Dh, 1.0f),
                  Error);
}
