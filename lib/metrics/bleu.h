// BLEU (Papineni et al., 2002) exactly as sacreBLEU 2.x computes it: tokenization, n-gram clipping
// against the per-n-gram maximum over references, closest reference length (shorter wins ties),
// smoothing (exp, floor, add-k, none) and effective order.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "metrics/metric.h"
#include "metrics/tokenizer.h"

namespace tt::metrics {

enum class SmoothMethod { none, floor, add_k, exp };

// "none", "floor", "add-k", "exp"; parse throws tt::ConfigError listing them.
SmoothMethod parse_smooth_method(const std::string& name);
std::string smooth_method_name(SmoothMethod method);

struct BleuOptions {
  bool lowercase = false;
  Tokenizer tokenizer = Tokenizer::t13a;
  SmoothMethod smooth_method = SmoothMethod::exp;
  std::optional<double> smooth_value;  // default: floor 0.1, add-k 1
  bool effective_order = false;        // sacreBLEU turns this on for sentence-level BLEU
};

inline constexpr int kBleuMaxOrder = 4;

// BLEU from its sufficient statistics (sacreBLEU's BLEU.compute_bleu).
struct BleuResult {
  double score = 0.0;
  double counts[kBleuMaxOrder] = {};
  double totals[kBleuMaxOrder] = {};
  double precisions[kBleuMaxOrder] = {};
  double bp = 1.0;
  double sys_len = 0;
  double ref_len = 0;
};
BleuResult compute_bleu(const double correct[kBleuMaxOrder], const double total[kBleuMaxOrder], double sys_len,
                        double ref_len, SmoothMethod method, std::optional<double> smooth_value,
                        bool effective_order);

// Statistics per segment: [hyp_len, ref_len, correct_1..4, total_1..4].
class Bleu : public Metric {
 public:
  explicit Bleu(BleuOptions options = {});
  std::string key() const override { return "BLEU"; }
  size_t n_stats() const override { return 2 + 2 * kBleuMaxOrder; }
  void segment_stats(std::string_view hyp, const std::vector<std::string_view>& refs,
                     double* out) const override;
  Score score(const double* stats) const override;
  void add_signature_fields(Signature& sig) const override;

  BleuResult result(const double* stats) const;
  const BleuOptions& options() const { return options_; }

 private:
  BleuOptions options_;
};

// "55.4/27.0/15.0/8.7 (BP = 1.000 ratio = 1.012 hyp_len = 20281 ref_len = 20050)"
std::string bleu_verbose(const BleuResult& result);

}  // namespace tt::metrics
