// The vectorised exp used by softmax and cross-entropy: relative error bound over the float range.
#include <catch2/catch.hpp>
#include <cmath>

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
