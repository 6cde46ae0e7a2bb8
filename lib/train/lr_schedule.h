// The paper's learning-rate schedule (§5.3): linear warm-up, then decay with the inverse square root of
// the step:  lr(s) = scale * d_model^-0.5 * min(s^-0.5, s * warmup^-1.5),  steps counted from 1.
// The peak, at s = warmup, is scale * (d_model * warmup)^-0.5.
#pragma once

#include <cstdint>

namespace tt::train {

class InverseSqrtSchedule {
 public:
  // Throws tt::ConfigError naming the option when d_model, warmup_steps or scale is not positive.
  InverseSqrtSchedule(int d_model, int64_t warmup_steps, double scale = 1.0);
  // step >= 1 (the first update is step 1).
  double lr(int64_t step) const;
  double peak() const { return lr(warmup_steps_); }
  int64_t warmup_steps() const { return warmup_steps_; }

 private:
  int d_model_;
  int64_t warmup_steps_;
  double scale_;
};

}  // namespace tt::train
