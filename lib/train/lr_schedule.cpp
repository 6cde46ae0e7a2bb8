#include "train/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "util/check.h"
#include "util/error.h"

namespace tt::train {

InverseSqrtSchedule::InverseSqrtSchedule(int d_model, int64_t warmup_steps, double scale)
    : d_model_(d_model), warmup_steps_(warmup_steps), scale_(scale) {
  if (d_model <= 0) throw ConfigError("learning-rate schedule: d_model (" + std::to_string(d_model) + ") must be positive");
  if (warmup_steps <= 0)
    throw ConfigError(option_ref("warmup_steps") + " (" + std::to_string(warmup_steps) + ") must be at least 1");
  if (!(scale > 0.0) || !std::isfinite(scale)) throw ConfigError(option_ref("lr_scale") + " must be a positive number");
}

double InverseSqrtSchedule::lr(int64_t step) const {
  TT_CHECK_MSG(step >= 1, "learning-rate steps count from 1");
  const double s = static_cast<double>(step), w = static_cast<double>(warmup_steps_);
  return scale_ * std::pow(static_cast<double>(d_model_), -0.5) * std::min(std::pow(s, -0.5), s * std::pow(w, -1.5));
}

LrSchedule::LrSchedule(int d_model, const LrScheduleOptions& options)
    : options_(options), paper_(d_model, options.warmup_steps, options.scale) {
  if (options.kind == LrScheduleKind::inverse_sqrt && (!(options.peak_lr > 0.0) || !std::isfinite(options.peak_lr)))
    throw ConfigError(option_ref("lr") + " (" + std::to_string(options.peak_lr) + ") must be a positive number");
}

double LrSchedule::lr(int64_t step) const {
  if (options_.kind == LrScheduleKind::paper) return paper_.lr(step);
  TT_CHECK_MSG(step >= 1, "learning-rate steps count from 1");
  const double s = static_cast<double>(step), w = static_cast<double>(options_.warmup_steps);
  return options_.peak_lr * std::min(s / w, std::sqrt(w / s));
}

}  // namespace tt::train
