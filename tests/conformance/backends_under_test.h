// The conformance suite's one idea: each kernel case is written once, against the double-precision
// reference (support/reference_kernels.h), and runs on every backend this host has — the CPU backend once
// per kernel variant this processor runs (baseline, avx2, avx512) and the CUDA backend when a device is
// visible. A new device or ISA variant joins every case by appearing in backends_under_test().
//
// What belongs to one backend alone (thread-count independence, OpenMP nesting, oneDNN's primitive
// cache, the CUDA allocator) stays in tests/backend and tests/cuda.
#pragma once

#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/cuda/cuda_factory.h"

namespace tt::test {

struct BackendUnderTest {
  std::string name;  // "cpu/avx2", "cuda:0": what a failure names
  std::function<std::unique_ptr<backend::Backend>()> make;
};

inline std::vector<BackendUnderTest> backends_under_test() {
  std::vector<BackendUnderTest> all;
  for (const std::string& isa : backend::cpu::supported_isas())
    all.push_back({"cpu/" + isa, [isa] { return std::make_unique<backend::cpu::CpuBackend>(2, isa); }});
  if (backend::cuda_device_count() > 0) all.push_back({"cuda:0", [] { return backend::make_cuda_backend(0); }});
  return all;
}

// Runs `test(backend)` on each backend under test; a failure's message names the backend.
template <typename Test>
void for_each_backend(Test&& test) {
  for (const BackendUnderTest& b : backends_under_test()) {
    INFO("backend " << b.name);
    auto be = b.make();
    test(*be);
  }
}

// The same, on each backend that offers bf16 products (set_matmul_precision(bf16) succeeds); says so
// where none does, so a host without bf16 instructions is seen not to test them.
template <typename Test>
void for_each_bf16_backend(Test&& test) {
  int ran = 0;
  for (const BackendUnderTest& b : backends_under_test()) {
    INFO("backend " << b.name);
    auto be = b.make();
    if (!be->set_matmul_precision(backend::MatmulPrecision::bf16)) {
      CHECK(be->matmul_precision() == backend::MatmulPrecision::fp32);
      continue;
    }
    ++ran;
    test(*be);
  }
  if (ran == 0) WARN("no backend here offers bf16 products: bf16 cases not run");
}

}  // namespace tt::test
