// sacreBLEU's multi-system report (print_results_table): a JSON list, or a tabulate "fancy_grid" table
// followed by the paired-test explanation and the metric signatures.
#pragma once

#include <string>
#include <vector>

#include "metrics/significance.h"

namespace tt::metrics {

struct SystemsReport {
  std::vector<std::string> systems;                  // "Baseline: a.txt", "b.txt", ...
  std::vector<std::string> metric_names;             // "BLEU", "chrF2", "TER"
  std::vector<std::vector<PairedResult>> results;    // [metric][system]
  std::vector<std::string> signatures;               // [metric]
  bool paired = false;
  PairedTest test = PairedTest::bootstrap;
  int n_samples = 0;
};

std::string format_systems_report(const SystemsReport& report, int width, bool json);

// Python's repr() of a float (shortest round-trip digits, exponent outside 1e-4 <= |x| < 1e16).
std::string python_float_repr(double value);

}  // namespace tt::metrics
