#include "train/run_report.h"

#include <sys/resource.h>

#include <cmath>

namespace tt::train {

nlohmann::json corpus_json(const data::CorpusStats& s) {
  return {{"lines", s.lines},           {"kept", s.kept},
          {"dropped_empty", s.dropped_empty}, {"dropped_long", s.dropped_long},
          {"dropped_ratio", s.dropped_ratio}, {"src_tokens", s.src_tokens},
          {"tgt_tokens", s.tgt_tokens}};
}

std::string corpus_line(const std::string& what, const data::CorpusStats& s) {
  return what + ": " + std::to_string(s.kept) + " of " + std::to_string(s.lines) + " pairs kept (" +
         std::to_string(s.dropped_empty) + " empty, " + std::to_string(s.dropped_long) + " too long, " +
         std::to_string(s.dropped_ratio) + " length ratio), " + std::to_string(s.src_tokens) + " source and " +
         std::to_string(s.tgt_tokens) + " target tokens";
}

double round_to(double x, int digits) {
  const double f = std::pow(10.0, digits);
  return std::round(x * f) / f;
}

double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

nlohmann::json synthetic_record(const nn::ModelConfig& config, const SyntheticOptions& options,
                                const SyntheticResult& result, const SyntheticRunInfo& info) {
  nlohmann::json out;
  out["bench"] = "train";
  out["device"] = info.device;
  out["precision"] = info.precision;
  out["matmul_isa"] = info.matmul_isa;
  out["threads"] = info.threads;
  out["ranks"] = info.ranks;
  out["parameters"] = config.parameter_count();
  out["batch"] = {options.batch_size, options.src_len, options.tgt_len};
  out["steps"] = options.steps;
  out["task"] = info.task;
  out["first_loss"] = round_to(result.losses.front(), 4);
  out["last_loss"] = round_to(result.losses.back(), 4);
  out["median_step_s"] = round_to(result.median_step_s, 5);
  out["tgt_tok_s"] = round_to(result.tgt_tok_s, 1);
  out["median_allreduce_s"] = round_to(result.median_allreduce_s, 6);
  out["peak_rss_mb"] = round_to(peak_rss_mb(), 1);
  nlohmann::json times = nlohmann::json::array();
  for (double t : result.step_seconds) times.push_back(round_to(t, 5));
  out["step_times"] = times;
  return out;
}

}  // namespace tt::train
