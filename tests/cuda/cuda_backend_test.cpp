// The CUDA backend's lifetime, memory, copies and caching allocator.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "cuda/cuda_fixture.h"
#include "util/error.h"

using namespace tt;
using namespace tt::test;

TEST_CASE("cuda backend: device, name and a missing device index", "[cuda]") {
  auto gpu = require_cuda();
  CHECK(gpu->device() == backend::Device::cuda);
  CHECK(gpu->name().rfind("cuda:0 (", 0) == 0);
  CHECK_THROWS_AS(backend::make_cuda_backend(backend::cuda_device_count()), Error);
  CHECK_THROWS_AS(backend::make_cuda_backend(-1), Error);
  CHECK(backend::make_backend("cuda", 0)->device() == backend::Device::cuda);
  CHECK(backend::cuda_available());
}

TEST_CASE("cuda backend: host round trip, device copy and fill", "[cuda]") {
  auto gpu = require_cuda();
  std::vector<float> host = random_floats(1001, 1);
  DeviceVector<float> a(*gpu, host);
  CHECK(a.to_host() == host);

  DeviceVector<float> b(*gpu, host.size(), 0.0f);
  gpu->copy(b.data(), a.data(), 1000 * sizeof(float));  // all but the last element
  std::vector<float> got = b.to_host();
  CHECK(std::vector<float>(got.begin(), got.end() - 1) == std::vector<float>(host.begin(), host.end() - 1));
  CHECK(got.back() == 0.0f);

  gpu->fill(b.data(), 2.5f, 999);
  got = b.to_host();
  for (int i = 0; i < 999; ++i) REQUIRE(got[i] == 2.5f);
  CHECK(got[999] == host[999]);  // fill stops at n
  gpu->fill(b.data(), 0.0f, 1001);
  for (float v : b.to_host()) REQUIRE(v == 0.0f);
  gpu->fill(b.data(), -0.0f, 3);
  CHECK(std::signbit(b.to_host()[0]));
  gpu->synchronize();
}

TEST_CASE("cuda backend: the caching allocator reuses freed blocks", "[cuda]") {
  auto gpu = require_cuda();
  auto& cuda = dynamic_cast<backend::CudaBackend&>(*gpu);
  size_t base = cuda.allocator().bytes_in_use();
  void* p = gpu->allocate(1 << 20);
  CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
  CHECK(cuda.allocator().bytes_in_use() == base + (1 << 20));
  gpu->deallocate(p, 1 << 20);
  CHECK(cuda.allocator().bytes_in_use() == base);
  CHECK(cuda.allocator().bytes_cached() >= (1 << 20));
  void* q = gpu->allocate(1 << 20);  // same size class: the cached block, no cudaMalloc
  CHECK(q == p);
  void* r = gpu->allocate(1 << 20);  // the cached block is taken: a new one
  CHECK(r != q);
  gpu->deallocate(q, 1 << 20);
  gpu->deallocate(r, 1 << 20);
}

TEST_CASE("cuda backend: an impossible allocation throws tt::Error, the backend stays usable", "[cuda]") {
  auto gpu = require_cuda();
  CHECK_THROWS_AS(gpu->allocate(size_t{1} << 50), Error);  // 1 PiB
  DeviceVector<float> a(*gpu, std::vector<float>{1.0f, 2.0f, 3.0f});
  CHECK(a.to_host() == std::vector<float>{1.0f, 2.0f, 3.0f});
}
