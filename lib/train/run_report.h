// What a training run reports besides its log records: the corpus statistics (as JSON for the "start"
// record and as a line for people), and the one JSON object a synthetic run prints (the speed
// benchmark's record, read by bench/train_speed.sh).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "data/parallel_corpus.h"
#include "nn/config.h"
#include "train/synthetic.h"

namespace tt::train {

nlohmann::json corpus_json(const data::CorpusStats& stats);
// "training: 40 of 40 pairs kept (0 empty, 0 too long, 0 length ratio), 520 source and 480 target tokens"
std::string corpus_line(const std::string& what, const data::CorpusStats& stats);

// `x` rounded to `digits` decimals (log and report numbers people read).
double round_to(double x, int digits);
// This process's peak resident memory so far, in MB.
double peak_rss_mb();

// Where a synthetic run ran, for its record.
struct SyntheticRunInfo {
  std::string device, precision, matmul_isa, task;
  int threads = 0, ranks = 1;
};
nlohmann::json synthetic_record(const nn::ModelConfig& config, const SyntheticOptions& options,
                                const SyntheticResult& result, const SyntheticRunInfo& info);

}  // namespace tt::train
