// The paper's inverse-square-root schedule on worked numbers.
#include <catch2/catch.hpp>
#include <cmath>

#include "train/lr_schedule.h"
#include "util/error.h"

using tt::train::InverseSqrtSchedule;

TEST_CASE("inverse-sqrt schedule: warm-up, peak and decay on worked numbers", "[lr]") {
  InverseSqrtSchedule s(512, 4000);
  // step 1: 512^-0.5 * 1 * 4000^-1.5 = 0.0441942 * 3.95285e-6
  CHECK(s.lr(1) == Approx(1.746928e-7).epsilon(1e-6));
  // warm-up is linear: lr(100) = 100 lr(1)
  CHECK(s.lr(100) == Approx(100 * s.lr(1)).epsilon(1e-12));
  // peak at the end of warm-up: (512 * 4000)^-0.5
  CHECK(s.lr(4000) == Approx(6.987712e-4).epsilon(1e-6));
  CHECK(s.peak() == s.lr(4000));
  CHECK(s.lr(3999) < s.lr(4000));
  CHECK(s.lr(4001) < s.lr(4000));
  // decay: 512^-0.5 * 16000^-0.5 = half the peak
  CHECK(s.lr(16000) == Approx(s.peak() / 2).epsilon(1e-12));
  CHECK(s.lr(100000) == Approx(1.397542e-4).epsilon(1e-6));
}

TEST_CASE("inverse-sqrt schedule: scale and small models", "[lr]") {
  InverseSqrtSchedule s(128, 10, 2.0);
  // 2 * 128^-0.5 * min(5^-0.5, 5 * 10^-1.5) = 2 * 0.0883883 * 0.158114
  CHECK(s.lr(5) == Approx(0.0279508).epsilon(1e-5));
  CHECK(s.lr(40) == Approx(2.0 / std::sqrt(128.0 * 40.0)).epsilon(1e-12));
  CHECK(s.warmup_steps() == 10);
}

TEST_CASE("inverse-sqrt schedule rejects impossible settings naming the option field", "[lr]") {
  CHECK_THROWS_WITH(InverseSqrtSchedule(512, 0), Catch::StartsWith("warmup_steps (0) must be at least 1"));
  CHECK_THROWS_AS(InverseSqrtSchedule(512, -5), tt::ConfigError);
  CHECK_THROWS_WITH(InverseSqrtSchedule(512, 100, 0.0), Catch::StartsWith("lr_scale must be a positive number"));
  CHECK_THROWS_AS(InverseSqrtSchedule(0, 100), tt::ConfigError);
}

TEST_CASE("LrSchedule: the paper's schedule or inverse-sqrt with a peak --lr", "[lr]") {
  using tt::train::LrSchedule;
  using tt::train::LrScheduleKind;
  tt::train::LrScheduleOptions o;
  o.warmup_steps = 100;
  o.scale = 2.0;
  LrSchedule paper(64, o);
  CHECK(paper.lr(37) == tt::train::InverseSqrtSchedule(64, 100, 2.0).lr(37));
  o.kind = LrScheduleKind::inverse_sqrt;
  o.peak_lr = 1e-3;
  LrSchedule s(64, o);
  CHECK(s.lr(1) == Approx(1e-5).epsilon(1e-12));     // linear warm-up from 0
  CHECK(s.lr(50) == Approx(5e-4).epsilon(1e-12));
  CHECK(s.lr(100) == Approx(1e-3).epsilon(1e-12));   // the peak
  CHECK(s.lr(400) == Approx(5e-4).epsilon(1e-12));   // peak * sqrt(100 / 400)
  o.peak_lr = 0;
  CHECK_THROWS_WITH(LrSchedule(64, o), Catch::StartsWith("lr (0.000000) must be a positive number"));
}
