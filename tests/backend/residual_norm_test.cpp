// The CPU's fused post-LN sub-layer end (residual_layer_norm_forward/backward) gives the same bits on 1 and
// 2 threads on every instruction-set variant, parameter gradients included. Against the reference and
// finite differences, fused and composed, on every backend: tests/conformance/residual_norm_test.cpp.
#include <catch2/catch.hpp>

#include "backend/cpu/cpu_backend.h"
#include "backend/kernel_fixture.h"
#include "support/residual_norm_cases.h"

using namespace tt;
using namespace tt::test::residual_norm;

TEST_CASE("residual_layer_norm gives the same bits on 1 and 2 threads on every ISA, flags kept or drawn again",
          "[backend][layer_norm]") {
  for (const std::string& isa : backend::cpu::supported_isas()) {
    for (const Case& c : kCases) {
      INFO("isa " << isa << " N=" << c.N << " D=" << c.D << " p=" << c.p << " bias=" << c.bias);
      const Data d(c, 3);
      backend::cpu::CpuBackend one(1, isa), two(2, isa);
      const Result a = run(one, c, d.X, d.R, d.bias, d.G, d.Bt, d.DY), b = run(two, c, d.X, d.R, d.bias, d.G, d.Bt, d.DY);
      CHECK(a.y == b.y);
      CHECK(a.dres == b.dres);
      CHECK(a.dx == b.dx);
      CHECK(a.dgamma == b.dgamma);
      CHECK(a.dbeta == b.dbeta);
      CHECK(a.dbias == b.dbias);
      const Result m = run(two, c, d.X, d.R, d.bias, d.G, d.Bt, d.DY, true, false);  // flags drawn again
      CHECK(m.dx == a.dx);
      CHECK(m.dgamma == a.dgamma);
    }
  }
}

