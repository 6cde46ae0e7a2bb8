// The vectorised exp used by softmax and cross-entropy: relative error bound over the float range.
#include <catch2/catch.hpp>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "backend/cpu/fast_math.h"

TEST_CASE("fast_exp is within 2e-7 relative error of exp", "[backend][fast_math]") {
  double worst = 0.0;
  float worst_x = 0.0f;
  for (float x = -87.0f; x <= 88.5f; x += 0.000731f) {
    double e = std::exp(static_cast<double>(x));
    double rel = std::abs(tt::backend::cpu::fast_exp(x) - e) / e;
    if (rel > worst) {
      worst = rel;
      worst_x = x;
    }
  }
  INFO("worst relative error " << worst << " at x = " << worst_x);
  CHECK(worst < 2e-7);
  CHECK(tt::backend::cpu::fast_exp(0.0f) == 1.0f);
  CHECK(tt::backend::cpu::fast_exp(-1000.0f) == 0.0f);
  CHECK(tt::backend::cpu::fast_exp(-INFINITY) == 0.0f);
  CHECK(std::isfinite(tt::backend::cpu::fast_exp(88.7f)));
}

// The softmax kernels call fast_exp_nonpositive on x - max <= 0; it must give fast_exp's bits there, so
// that no score, loss or translation changes. Every 61st float from -0 down past the underflow bound, every
// float around that bound and around the exponent boundaries near it, and the special values.
TEST_CASE("fast_exp_nonpositive gives fast_exp's bits for every x <= 0", "[backend][fast_math]") {
  using tt::backend::cpu::fast_exp;
  using tt::backend::cpu::fast_exp_nonpositive;
  int64_t checked = 0, differ = 0;
  float first_differ = 0.0f;
  auto check = [&](float x) {
    ++checked;
    if (std::bit_cast<uint32_t>(fast_exp(x)) != std::bit_cast<uint32_t>(fast_exp_nonpositive(x)) && differ++ == 0)
      first_differ = x;
  };
  const uint32_t end = std::bit_cast<uint32_t>(-90.0f);
  for (uint32_t u = 0x80000000u; u <= end; u += 61) check(std::bit_cast<float>(u));
  for (float centre : {-87.33654f, -87.0f, -86.5f, -44.0f, -0.5f})
    for (int d = -20000; d <= 20000; ++d) check(std::bit_cast<float>(std::bit_cast<uint32_t>(centre) + d));
  for (float x : {0.0f, -0.0f, -std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::denorm_min(),
                  -1000.0f})
    check(x);
  INFO(checked << " values, first difference at x = " << first_differ);
  CHECK(differ == 0);
  CHECK(std::isnan(fast_exp_nonpositive(std::numeric_limits<float>::quiet_NaN())));
  CHECK(fast_exp_nonpositive(-87.0f) > 0.0f);
  CHECK(fast_exp_nonpositive(-88.0f) == 0.0f);
}
