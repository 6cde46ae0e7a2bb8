#include "metrics/significance.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "metrics/numpy_random.h"
#include "util/error.h"

namespace tt::metrics {

namespace {

// sacreBLEU's estimate_ci: mean and half the spread between the 2.5% and 97.5% order statistics.
std::pair<double, double> estimate_ci(std::vector<double> scores) {
  std::sort(scores.begin(), scores.end());
  const size_t n = scores.size();
  const size_t lower = n / 40, upper = n - lower - 1;
  double sum = 0.0;
  for (double s : scores) sum += s;
  return {sum / static_cast<double>(n), 0.5 * (scores[upper] - scores[lower])};
}

// Scores of the resamples: row r of `indices` (n_samples x n) picks the segments of resample r.
std::vector<double> resampled_scores(const Metric& metric, const std::vector<double>& stats, size_t n,
                                     const std::vector<uint32_t>& indices, int n_samples) {
  const size_t k = metric.n_stats();
  std::vector<double> scores(static_cast<size_t>(n_samples)), sum(k);
  for (size_t r = 0; r < static_cast<size_t>(n_samples); ++r) {
    std::fill(sum.begin(), sum.end(), 0.0);
    for (size_t i = 0; i < n; ++i) {
      const double* row = stats.data() + static_cast<size_t>(indices[r * n + i]) * k;
      for (size_t c = 0; c < k; ++c) sum[c] += row[c];
    }
    scores[r] = metric.score(sum.data()).score;
  }
  return scores;
}

double p_value(const std::vector<double>& sample_stats, double real_difference) {
  size_t count = 0;
  for (double s : sample_stats) count += s > real_difference;
  return static_cast<double>(count + 1) / static_cast<double>(sample_stats.size() + 1);
}

// The callers' counts come from the command line; a zero would index scores[-1] in estimate_ci.
void check_samples(int n_samples) {
  if (n_samples < 1) {
    throw ConfigError("the number of resamples/trials must be at least 1, got " + std::to_string(n_samples));
  }
}

}  // namespace

std::pair<double, double> bootstrap_confidence(const Metric& metric, const std::vector<double>& stats,
                                               size_t n_segments, int n_samples, uint64_t seed) {
  check_samples(n_samples);
  NumpyRandom rng(seed);
  auto indices = rng.integers(n_segments, static_cast<size_t>(n_samples) * n_segments);
  return estimate_ci(resampled_scores(metric, stats, n_segments, indices, n_samples));
}

std::vector<PairedResult> paired_test(const Metric& metric, const std::vector<std::vector<double>>& stats,
                                      size_t n, PairedTest test, int n_samples, uint64_t seed) {
  check_samples(n_samples);
  const size_t k = metric.n_stats();
  std::vector<PairedResult> results(stats.size());
  for (size_t s = 0; s < stats.size(); ++s) results[s].score = metric.score(sum_stats(stats[s], k).data()).score;
  const double baseline = results[0].score;
  if (test == PairedTest::bootstrap) {
    // Every comparison (and the baseline's own interval) draws from a generator seeded afresh.
    NumpyRandom rng(seed);
    auto indices = rng.integers(n, static_cast<size_t>(n_samples) * n);
    std::vector<double> base_scores = resampled_scores(metric, stats[0], n, indices, n_samples);
    std::tie(results[0].mean, results[0].ci) = estimate_ci(base_scores);
    for (size_t s = 1; s < stats.size(); ++s) {
      std::vector<double> sys_scores = resampled_scores(metric, stats[s], n, indices, n_samples);
      auto [mean, ci] = estimate_ci(sys_scores);
      std::vector<double> diffs(sys_scores.size());
      double diff_mean = 0.0;
      for (size_t r = 0; r < diffs.size(); ++r) {
        diffs[r] = std::fabs(sys_scores[r] - base_scores[r]);
        diff_mean += diffs[r];
      }
      diff_mean /= static_cast<double>(diffs.size());
      for (double& d : diffs) d -= diff_mean;
      results[s].mean = mean;
      results[s].ci = ci;
      results[s].p_value = p_value(diffs, std::fabs(baseline - results[s].score));
    }
    return results;
  }
  NumpyRandom rng(seed);
  auto select = rng.booleans(static_cast<size_t>(n_samples) * n);
  std::vector<double> sum_a(k), sum_b(k);
  for (size_t s = 1; s < stats.size(); ++s) {
    std::vector<double> deltas(static_cast<size_t>(n_samples));
    for (size_t r = 0; r < deltas.size(); ++r) {
      std::fill(sum_a.begin(), sum_a.end(), 0.0);
      std::fill(sum_b.begin(), sum_b.end(), 0.0);
      for (size_t i = 0; i < n; ++i) {
        const double* base = stats[0].data() + i * k;
        const double* sys = stats[s].data() + i * k;
        bool swap = select[r * n + i] != 0;
        for (size_t c = 0; c < k; ++c) {
          sum_a[c] += swap ? base[c] : sys[c];
          sum_b[c] += swap ? sys[c] : base[c];
        }
      }
      deltas[r] = std::fabs(metric.score(sum_a.data()).score - metric.score(sum_b.data()).score);
    }
    results[s].p_value = p_value(deltas, std::fabs(baseline - results[s].score));
  }
  return results;
}

}  // namespace tt::metrics
