// make_backend: device names, thread policy, and the CUDA-less error.
#include <catch2/catch.hpp>
#include <omp.h>

#include "backend/backend.h"
#include "backend/cpu/kernels/kernel_table.h"
#include "util/error.h"

using namespace tt;

TEST_CASE("make_backend builds the CPU backend and names its threads", "[backend][factory]") {
  auto be = backend::make_backend("cpu", 1);
  CHECK(be->device() == backend::Device::cpu);
  const std::string isa = backend::cpu::supported_isas().back();
  CHECK(be->name() == "cpu (oneDNN, 1 thread, " + isa + " kernels)");
  auto all = backend::make_backend("cpu", 0);  // <= 0: all cores
  CHECK(all->name() == "cpu (oneDNN, " + std::to_string(omp_get_num_procs()) +
                           (omp_get_num_procs() == 1 ? " thread, " : " threads, ") + isa + " kernels)");
}

TEST_CASE("make_backend rejects unknown devices and explains missing CUDA", "[backend][factory]") {
  CHECK_THROWS_AS(backend::make_backend("tpu", 1), ConfigError);
  CHECK_THROWS_WITH(backend::make_backend("gpu", 1), Catch::Contains("cpu, cuda, cuda:N or auto"));
  CHECK_THROWS_AS(backend::make_backend("cuda:", 1), ConfigError);
  CHECK_THROWS_AS(backend::make_backend("cuda:x", 1), ConfigError);
  if (!backend::cuda_available()) {
    auto be = backend::make_backend("auto", 1);
    CHECK(be->device() == backend::Device::cpu);
  }
  // Without a usable GPU, "cuda" is a tt::Error (the build-without-CUDA message, or the CUDA error text).
  if (!backend::cuda_available()) {
    CHECK_THROWS_AS(backend::make_backend("cuda", 1), Error);
    CHECK_THROWS_AS(backend::make_backend("cuda:1", 1), Error);
  }
}

TEST_CASE("allocate is 64-byte aligned, zero bytes gives null", "[backend][memory]") {
  auto be = backend::make_backend("cpu", 1);
  for (size_t bytes : {size_t{1}, size_t{100}, size_t{4096}}) {
    void* p = be->allocate(bytes);
    CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
    be->deallocate(p, bytes);
  }
  CHECK(be->allocate(0) == nullptr);
}
