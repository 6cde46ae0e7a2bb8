// chrF (Popović, 2015) and chrF++ (word n-grams, Popović, 2017) exactly as sacreBLEU 2.x computes them:
// character n-grams over code points with whitespace removed (unless --chrf-whitespace), word n-grams
// after sacreBLEU's punctuation splitting, the best reference per segment by F-score, and effective-order
// averaging (or chrF++.py's epsilon smoothing).
#pragma once

#include "metrics/metric.h"

namespace tt::metrics {

struct ChrfOptions {
  int char_order = 6;
  int word_order = 0;  // 2 = chrF++; negative: score only char orders 1..char_order+word_order (sacreBLEU)
  int beta = 2;
  bool lowercase = false;
  bool whitespace = false;
  bool eps_smoothing = false;
};

// Statistics per segment: for each order (chars 1..char_order, then words 1..word_order) the triple
// [hyp n-grams, ref n-grams, matches] of the best reference.
class Chrf : public Metric {
 public:
  explicit Chrf(ChrfOptions options = {});
  std::string key() const override { return "CHRF"; }
  size_t n_stats() const override { return 3 * static_cast<size_t>(char_order_ + word_order_); }
  void segment_stats(std::string_view hyp, const std::vector<std::string_view>& refs,
                     double* out) const override;
  Score score(const double* stats) const override;
  void add_signature_fields(Signature& sig) const override;

  // sacreBLEU's CHRF._compute_f_score.
  double f_score(const double* stats) const;
  std::string name() const;

 private:
  ChrfOptions options_;
  int char_order_ = 0, word_order_ = 0;  // the orders actually scored (see the constructor)
};

}  // namespace tt::metrics
