#include "metrics/metric.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>

namespace tt::metrics {

void Signature::set(const std::string& key, const std::string& value, const std::string& short_key) {
  for (size_t i = 0; i < items_.size(); ++i) {
    if (items_[i].first == key) {
      items_[i].second = value;
      if (!short_key.empty()) short_keys_[i] = short_key;
      return;
    }
  }
  items_.emplace_back(key, value);
  short_keys_.push_back(short_key.empty() ? key : short_key);
}

std::string Signature::format(bool short_keys) const {
  std::string out;
  for (size_t i = 0; i < items_.size(); ++i) {
    if (!out.empty()) out += '|';
    out += (short_keys ? short_keys_[i] : items_[i].first) + ':' + items_[i].second;
  }
  return out;
}

Signature Metric::signature(const SignatureContext& context) const {
  // sacreBLEU's key order: nrefs, bs, ar, seed, ..., metric fields, version last.
  Signature sig;
  sig.set("nrefs", std::to_string(context.n_refs), "#");
  if (context.bootstrap_samples > 0) sig.set("bs", std::to_string(context.bootstrap_samples));
  if (context.ar_trials > 0) sig.set("ar", std::to_string(context.ar_trials));
  if (!context.seed.empty()) sig.set("seed", context.seed, "rs");
  add_signature_fields(sig);
  sig.set("version", kSacrebleuVersion, "v");
  return sig;
}

std::vector<double> corpus_stats(const Metric& metric, const std::vector<std::string>& hyps,
                                 const std::vector<std::vector<std::string>>& refs, int threads) {
  const size_t n = hyps.size();
  const size_t k = metric.n_stats();
  std::vector<double> stats(n * k, 0.0);
  auto work = [&](size_t begin, size_t end) {
    std::vector<std::string_view> seg_refs(refs.size());
    for (size_t i = begin; i < end; ++i) {
      for (size_t r = 0; r < refs.size(); ++r) seg_refs[r] = refs[r][i];
      metric.segment_stats(hyps[i], seg_refs, stats.data() + i * k);
    }
  };
  size_t n_threads = threads > 0 ? static_cast<size_t>(threads) : std::max(1u, std::thread::hardware_concurrency());
  n_threads = std::min(n_threads, std::max<size_t>(1, n / 256));
  if (n_threads <= 1) {
    work(0, n);
    return stats;
  }
  // Each thread writes its own rows, so the result is the same for any thread count.
  std::vector<std::thread> pool;
  std::exception_ptr error;
  std::mutex error_mutex;
  for (size_t t = 0; t < n_threads; ++t) {
    size_t begin = n * t / n_threads, end = n * (t + 1) / n_threads;
    pool.emplace_back([&, begin, end] {
      try {
        work(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    });
  }
  for (auto& thread : pool) thread.join();
  if (error) std::rethrow_exception(error);
  return stats;
}

std::vector<double> sum_stats(const std::vector<double>& stats, size_t n_stats) {
  std::vector<double> total(n_stats, 0.0);
  for (size_t i = 0; i < stats.size(); i += n_stats) {
    for (size_t c = 0; c < n_stats; ++c) total[c] += stats[i + c];
  }
  return total;
}

}  // namespace tt::metrics
