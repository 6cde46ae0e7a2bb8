// The interface every sacreBLEU metric implements here (BLEU, chrF, TER): per-segment sufficient
// statistics, a score from summed statistics, and the reproducibility signature. Statistics are doubles
// (integral counts are exact in a double; TER's average reference length is fractional), so corpus
// scoring, sentence scoring and the significance tests share one code path, as in sacreBLEU.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tt::metrics {

// sacreBLEU's version that tt-bleu reproduces; signatures carry it so that they compare equal to
// sacreBLEU's for the same options.
inline constexpr const char* kSacrebleuVersion = "2.6.0";

struct Score {
  std::string name;     // "BLEU", "chrF2", "chrF2++", "TER"
  double score = 0.0;
  std::string verbose;  // BLEU's "55.4/27.0/15.0/8.7 (BP = ...)", empty for the others
};

// Ordered key:value pairs, e.g. nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0.
// `short_key` is the abbreviation sacreBLEU's --short (-sh) prints ("#" for nrefs, "c" for case, ...);
// empty means the key itself.
class Signature {
 public:
  void set(const std::string& key, const std::string& value, const std::string& short_key = "");
  std::string format(bool short_keys = false) const;
  const std::vector<std::pair<std::string, std::string>>& items() const { return items_; }

 private:
  std::vector<std::pair<std::string, std::string>> items_;
  std::vector<std::string> short_keys_;  // parallel to items_
};

// Options shared by every metric's signature: number of references and the significance-test fields.
struct SignatureContext {
  int n_refs = 1;
  int bootstrap_samples = 0;  // "bs:" (paired bootstrap or confidence intervals), 0 = absent
  int ar_trials = 0;          // "ar:", 0 = absent
  std::string seed;           // "seed:", empty = absent
};

class Metric {
 public:
  virtual ~Metric() = default;
  // "BLEU", "CHRF" or "TER": sacreBLEU sorts metrics by this key in its output.
  virtual std::string key() const = 0;
  // Number of statistics per segment.
  virtual size_t n_stats() const = 0;
  // Writes the n_stats() statistics of one hypothesis against its references (raw lines; the metric
  // applies its own lowercasing and tokenization).
  virtual void segment_stats(std::string_view hyp, const std::vector<std::string_view>& refs,
                             double* out) const = 0;
  // Score from statistics summed over segments.
  virtual Score score(const double* stats) const = 0;
  // Metric-specific signature fields after the common ones.
  virtual void add_signature_fields(Signature& sig) const = 0;

  Signature signature(const SignatureContext& context) const;
};

// Per-segment statistics of a corpus: row i (n_stats() doubles) for hyps[i] against refs[r][i].
// Lines are split over `threads` threads (0 = hardware concurrency); the result does not depend on it.
std::vector<double> corpus_stats(const Metric& metric, const std::vector<std::string>& hyps,
                                 const std::vector<std::vector<std::string>>& refs, int threads = 0);

// Column sums of the statistics, added in segment order (as sacreBLEU's sum_of_lists does).
std::vector<double> sum_stats(const std::vector<double>& stats, size_t n_stats);

}  // namespace tt::metrics
