// The CPU kernels exist once per instruction set (baseline, AVX2, AVX-512), chosen at run time: "auto"
// picks the best this processor runs. Every variant runs the conformance suite (tests/conformance).
#include <catch2/catch.hpp>

#include "backend/cpu/cpu_backend.h"
#include "util/error.h"

using namespace tt;

TEST_CASE("auto picks the best supported kernels, unknown or unsupported ones are refused", "[backend][isa]") {
  const auto isas = backend::cpu::supported_isas();
  REQUIRE(isas.front() == "baseline");
  CHECK(std::string(backend::cpu::CpuBackend(1).isa()) == isas.back());
  CHECK_THROWS_AS(backend::cpu::CpuBackend(1, "sse9"), ConfigError);
  if (isas.back() != "avx512") CHECK_THROWS_AS(backend::cpu::CpuBackend(1, "avx512"), ConfigError);
}
