// sacreBLEU's output formats: a score line "BLEU|<signature> = 20.8 <verbose>" or a JSON object with the
// signature fields spread out (Score.format), and the layout of several metrics (print_single_results:
// a JSON list, or text lines aligned on " = ").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "metrics/metric.h"

namespace tt::metrics {

// Bootstrap confidence interval printed as "(μ = mean ± ci)".
struct Confidence {
  double mean = 0.0;
  double ci = 0.0;
};

struct FormatOptions {
  int width = 1;            // decimals (sacreBLEU's -w; its CLI default is 1)
  bool score_only = false;  // -b: just the number
  bool json = true;         // -f json (sacreBLEU's default) or text
  bool one_line = false;    // JSON on a single line (sentence-level output)
  bool short_signature = false;  // -sh: abbreviated keys in the text signature (sacreBLEU: text output only)
};

// One metric's result, as sacreBLEU's Score.format prints it.
std::string format_score(const Score& score, const Signature& signature, const FormatOptions& options,
                         const std::optional<Confidence>& confidence = std::nullopt);

// Several formatted results, as sacreBLEU prints them (no trailing newline).
std::string join_results(const std::vector<std::string>& results, bool json);

// f"{value:.{width}f}"
std::string fixed(double value, int width);

}  // namespace tt::metrics
