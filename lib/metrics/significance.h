// Paired significance tests between a baseline and other systems, as sacreBLEU's --paired-bs (paired
// bootstrap resampling, Koehn 2004) and --paired-ar (approximate randomization, Riezler & Maxwell 2005).
// Resampling uses numpy's generator with the same seed, so the same segments are drawn as in sacreBLEU.
// Resampled scores are computed in double precision (sacreBLEU sums them in float32), so bootstrap
// means and confidence intervals can differ from sacreBLEU's in the last printed digit.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "metrics/metric.h"

namespace tt::metrics {

enum class PairedTest { bootstrap, randomization };

struct PairedResult {
  double score = 0.0;
  std::optional<double> p_value;  // absent for the baseline
  std::optional<double> mean;     // bootstrap estimate of the true mean (paired bootstrap only)
  std::optional<double> ci;       // half-width of the 95% confidence interval
};

// stats[s] holds system s's per-segment statistics (corpus_stats layout); system 0 is the baseline.
// Returns one result per system. n_samples must be >= 1 (tt::ConfigError otherwise).
std::vector<PairedResult> paired_test(const Metric& metric, const std::vector<std::vector<double>>& stats,
                                      size_t n_segments, PairedTest test, int n_samples, uint64_t seed);

// Bootstrap confidence interval of one system's score (sacreBLEU's --confidence): (mean, half-width).
// n_samples must be >= 1 (tt::ConfigError otherwise).
std::pair<double, double> bootstrap_confidence(const Metric& metric, const std::vector<double>& stats,
                                               size_t n_segments, int n_samples, uint64_t seed);

}  // namespace tt::metrics
