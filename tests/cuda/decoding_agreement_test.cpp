// The decoding kernels agree between the CUDA and CPU backends (each kernel is checked against another implementation): attention_decode within fp32
// summation-order tolerance, topk exactly (indices and value bits), on beam-search shapes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "cuda/cuda_fixture.h"

using namespace tt;
using namespace tt::test;

TEST_CASE("cuda attention_decode agrees with the CPU backend", "[cuda][decode]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  const int rows = 96, H = 8, Dh = 64, max_keys = 70, N = 400, D = H * Dh;
  const auto q = random_floats(size_t(rows) * D, 1), k = random_floats(size_t(N) * D, 2), v = random_floats(size_t(N) * D, 3);
  const auto key_rows = random_ids(size_t(rows) * max_keys, 4, 0, N);
  std::vector<int32_t> counts(rows);
  for (int r = 0; r < rows; ++r) counts[size_t(r)] = 1 + (r * 37) % max_keys;
  std::vector<float> cpu_ctx(size_t(rows) * D), cpu_probs(size_t(rows) * H * max_keys);
  cpu->attention_decode(cpu_ctx.data(), D, cpu_probs.data(), q.data(), D, k.data(), v.data(), D, key_rows.data(),
                        counts.data(), rows, max_keys, H, Dh, 0.125f);
  DeviceVector<float> dq(*gpu, q), dk(*gpu, k), dv(*gpu, v), dctx(*gpu, cpu_ctx.size(), 0.0f),
      dprobs(*gpu, cpu_probs.size(), 0.0f);
  DeviceVector<int32_t> drows(*gpu, key_rows), dcounts(*gpu, counts);
  gpu->attention_decode(dctx.data(), D, dprobs.data(), dq.data(), D, dk.data(), dv.data(), D, drows.data(),
                        dcounts.data(), rows, max_keys, H, Dh, 0.125f);
  const auto ctx = dctx.to_host(), probs = dprobs.to_host();
  for (size_t i = 0; i < ctx.size(); ++i) REQUIRE(ctx[i] == Approx(cpu_ctx[i]).margin(1e-5));
  for (size_t i = 0; i < probs.size(); ++i) REQUIRE(probs[i] == Approx(cpu_probs[i]).margin(1e-6));
}

TEST_CASE("cuda topk agrees with the CPU backend bit for bit", "[cuda][decode]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  const int rows = 128, V = 8000, k = 7;
  auto x = random_floats(size_t(rows) * V, 5, -20, 0);
  for (int r = 0; r < rows; r += 3) x[size_t(r) * V + 11] = x[size_t(r) * V + 4000] = 1.0f;  // ties for first
  x[size_t(5) * V + 9] = std::nanf("");
  std::vector<float> cpu_values(size_t(rows) * k);
  std::vector<int32_t> cpu_indices(size_t(rows) * k);
  cpu->topk(cpu_values.data(), cpu_indices.data(), x.data(), rows, V, k);
  DeviceVector<float> dx(*gpu, x), dvalues(*gpu, cpu_values.size(), 0.0f);
  DeviceVector<int32_t> dindices(*gpu, cpu_indices.size(), -1);
  gpu->topk(dvalues.data(), dindices.data(), dx.data(), rows, V, k);
  REQUIRE(dindices.to_host() == cpu_indices);
  const auto values = dvalues.to_host();
  REQUIRE(std::memcmp(values.data(), cpu_values.data(), values.size() * sizeof(float)) == 0);
}
