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

// What tt-train schedules: the paper's (above, with --lr-scale) or fairseq's inverse_sqrt with a peak
// learning rate, the small-data recipes' choice:  lr(s) = peak * min(s / warmup, sqrt(warmup / s)).
enum class LrScheduleKind { paper, inverse_sqrt };

struct LrScheduleOptions {
  LrScheduleKind kind = LrScheduleKind::paper;
  int64_t warmup_steps = 4000;
  double scale = 1.0;     // paper
  double peak_lr = 5e-4;  // inverse_sqrt
};

class LrSchedule {
 public:
  // Throws tt::ConfigError naming the option for a non-positive warm-up, scale or peak.
  LrSchedule(int d_model, const LrScheduleOptions& options);
  double lr(int64_t step) const;  // step >= 1
  const LrScheduleOptions& options() const { return options_; }

 private:
  LrScheduleOptions options_;
  InverseSqrtSchedule paper_;
};

}  // namespace tt::train
