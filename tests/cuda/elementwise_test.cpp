// Elementwise kernels and reductions against the CPU backend: odd sizes, aliasing, accumulation.
#include <catch2/catch.hpp>

#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "cuda/cuda_fixture.h"

using namespace tt;
using namespace tt::test;

TEST_CASE("cuda add_bias: separate output and in place", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  for (auto [N, D] : {std::pair<int64_t, int>{1, 1}, {7, 33}, {129, 517}}) {
    std::vector<float> x = random_floats(N * D, 1), bias = random_floats(D, 2), y(N * D);
    DeviceVector<float> dx(*gpu, x), dbias(*gpu, bias), dy(*gpu, y);
    gpu->add_bias(dy.data(), dx.data(), dbias.data(), N, D);
    gpu->add_bias(dx.data(), dx.data(), dbias.data(), N, D);  // y aliases x
    cpu->add_bias(y.data(), x.data(), bias.data(), N, D);
    check_close(dy.to_host(), y, 0, 0);
    check_close(dx.to_host(), y, 0, 0);
  }
}

TEST_CASE("cuda bias_backward accumulates column sums", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  // Row counts below, at and past one chunk of the two-pass reduction, and a training batch's 25k tokens.
  const int64_t chunk = backend::CudaBackend::kColumnChunk;
  for (auto [N, D] : {std::pair<int64_t, int>{1, 1}, {3, 31}, {1000, 70}, {37, 2049}, {chunk, 33},
                      {chunk + 1, 64}, {25000, 512}}) {
    INFO("N " << N << " D " << D);
    std::vector<float> dy = random_floats(N * D, 3), dbias = random_floats(D, 4);
    DeviceVector<float> ddy(*gpu, dy), ddbias(*gpu, dbias);
    gpu->bias_backward(ddbias.data(), ddy.data(), N, D);
    const std::vector<float> first = ddbias.to_host();
    cpu->bias_backward(dbias.data(), dy.data(), N, D);
    check_close(first, dbias, 1e-5, N > 1000 ? 1e-3 : 1e-4);
    // The same sums again, bit for bit: a fixed summation order.
    DeviceVector<float> again(*gpu, random_floats(D, 4));
    gpu->bias_backward(again.data(), ddy.data(), N, D);
    check_equal(again.to_host(), first);
  }
}

TEST_CASE("cuda add, axpy and scale, with aliasing", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  const int64_t n = 100003;
  std::vector<float> a = random_floats(n, 5), b = random_floats(n, 6), y(n);
  DeviceVector<float> da(*gpu, a), db(*gpu, b), dy(*gpu, y);
  gpu->add(dy.data(), da.data(), db.data(), n);
  cpu->add(y.data(), a.data(), b.data(), n);
  check_close(dy.to_host(), y, 0, 0);
  gpu->add(da.data(), da.data(), db.data(), n);  // y aliases a
  cpu->add(a.data(), a.data(), b.data(), n);
  check_close(da.to_host(), a, 0, 0);
  gpu->axpy(da.data(), -0.25f, db.data(), n);
  cpu->axpy(a.data(), -0.25f, b.data(), n);
  check_close(da.to_host(), a, 1e-6, 1e-7);
  gpu->scale(da.data(), 3.0f, n - 1);  // the last element stays
  cpu->scale(a.data(), 3.0f, n - 1);
  check_close(da.to_host(), a, 1e-6, 1e-7);
}

TEST_CASE("cuda sum_squares is a double-precision sum", "[cuda]") {
  auto gpu = require_cuda();
  for (int64_t n : {int64_t{1}, int64_t{1023}, int64_t{3000017}}) {
    std::vector<float> x = random_floats(n, 7);
    double want = 0.0;
    for (float v : x) want += double(v) * double(v);
    DeviceVector<float> dx(*gpu, x);
    double got = gpu->sum_squares(dx.data(), n);
    CHECK(got == Approx(want).epsilon(1e-12));
    CHECK(gpu->sum_squares(dx.data(), n) == got);  // deterministic
  }
  CHECK(gpu->sum_squares(nullptr, 0) == 0.0);
}
