// TER (Snover et al., 2006) as sacreBLEU 2.x computes it: tercom tokenization, then per segment the
// fewest edits over the references divided by the average reference length.
#pragma once

#include "metrics/metric.h"
#include "metrics/tercom_tokenizer.h"

namespace tt::metrics {

// Statistics per segment: [best number of edits, average reference length].
class Ter : public Metric {
 public:
  explicit Ter(TercomOptions options = {});
  std::string key() const override { return "TER"; }
  size_t n_stats() const override { return 2; }
  void segment_stats(std::string_view hyp, const std::vector<std::string_view>& refs,
                     double* out) const override;
  Score score(const double* stats) const override;
  void add_signature_fields(Signature& sig) const override;

 private:
  TercomOptions options_;
};

}  // namespace tt::metrics
