#include "train/synthetic.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "train/trainer.h"
#include "util/error.h"
#include "util/rng.h"

namespace tt::train {

nn::Batch synthetic_batch(const nn::ModelConfig& config, SyntheticTask task, int B, int S, int T, uint64_t seed,
                          int64_t step) {
  nn::Batch b;
  b.B = B;
  b.S = S;
  b.T = T;
  b.pad_id = config.pad_id;
  const int first = 4;  // past pad, unk, bos, eos
  const int vocab = std::min(config.vocab_size_src, config.vocab_size_tgt);
  const uint64_t stream = util::rng_stream(util::RngPurpose::shuffle, static_cast<uint64_t>(step), 0);
  uint64_t counter = 0;
  auto draw = [&] {
    const float u = util::philox_uniform(seed, stream, counter++);
    return first + std::min(vocab - first - 1, static_cast<int>(u * static_cast<float>(vocab - first)));
  };
  b.src.resize(static_cast<size_t>(B) * S);
  for (auto& id : b.src) id = draw();
  b.src_lengths.assign(B, S);
  b.tgt_lengths.assign(B, T);
  b.tgt_in.resize(static_cast<size_t>(B) * T);
  b.tgt_out.resize(static_cast<size_t>(B) * T);
  for (int i = 0; i < B; ++i) {
    for (int t = 0; t < T; ++t) {
      const size_t k = static_cast<size_t>(i) * T + t;
      b.tgt_out[k] = task == SyntheticTask::copy ? b.src[static_cast<size_t>(i) * S + t] : draw();
    }
    b.tgt_in[static_cast<size_t>(i) * T] = config.bos_id;
    for (int t = 1; t < T; ++t) b.tgt_in[static_cast<size_t>(i) * T + t] = b.tgt_out[static_cast<size_t>(i) * T + t - 1];
  }
  return b;
}

void check_synthetic_options(const nn::ModelConfig& config, const SyntheticOptions& o) {
  if (o.steps < 1) throw ConfigError(option_ref("steps") + " (" + std::to_string(o.steps) + ") must be at least 1");
  if (o.batch_size < 1)
    throw ConfigError(option_ref("batch_size") + " (" + std::to_string(o.batch_size) + ") must be at least 1");
  if (o.src_len < 1 || o.tgt_len < 1)
    throw ConfigError(option_ref("src_len") + " and " + option_ref("tgt_len") + " must be at least 1");
  // Decoder positions run 0..T-1 and encoder positions 0..S-1.
  if (std::max(o.src_len, o.tgt_len) > config.max_positions)
    throw ConfigError(option_ref("src_len") + "/" + option_ref("tgt_len") + " exceed max_positions (" +
                      std::to_string(config.max_positions) + ")");
  if (o.task == SyntheticTask::copy && o.tgt_len > o.src_len)
    throw ConfigError("the copy task needs " + option_ref("tgt_len") + " <= " + option_ref("src_len"));
}

SyntheticResult train_synthetic(nn::Transformer& model, const SyntheticOptions& o,
                                const std::function<void(const StepReport&)>& on_step, dist::Communicator* comm) {
  const nn::ModelConfig& config = model.config();
  check_synthetic_options(config, o);

  SyntheticBatches source(config, o.task, o.batch_size, o.src_len, o.tgt_len, o.seed);
  TrainerOptions trainer_options;
  trainer_options.schedule.warmup_steps = o.warmup_steps;
  trainer_options.schedule.scale = o.lr_scale;
  trainer_options.seed = o.seed;
  dist::LocalCommunicator local;
  Trainer trainer(model, source, trainer_options, comm ? *comm : local);
  std::vector<double> reduce_seconds;
  SyntheticResult result;
  for (int64_t step = 1; step <= o.steps; ++step) {
    // Batch generation is the data pipeline's job, outside the timed step (as in the anchor).
    const StepStats stats = trainer.step();
    StepReport report;
    report.step = stats.step;
    report.loss = stats.loss();
    report.lr = stats.lr;
    report.seconds = stats.seconds;
    report.allreduce_seconds = stats.allreduce_seconds;
    reduce_seconds.push_back(stats.allreduce_seconds);
    result.losses.push_back(report.loss);
    result.step_seconds.push_back(report.seconds);
    if (on_step) on_step(report);
  }
  // Steady state: the first steps grow the arena and warm caches and oneDNN primitives.
  std::vector<double> steady(result.step_seconds.begin() + (o.steps > 3 ? 3 : 0), result.step_seconds.end());
  std::sort(steady.begin(), steady.end());
  const size_t n = steady.size();
  result.median_step_s = n % 2 ? steady[n / 2] : 0.5 * (steady[n / 2 - 1] + steady[n / 2]);
  result.tgt_tok_s = static_cast<double>(trainer.batches_per_step()) * o.batch_size * o.tgt_len / result.median_step_s;
  std::vector<double> steady_reduce(reduce_seconds.begin() + (o.steps > 3 ? 3 : 0), reduce_seconds.end());
  std::sort(steady_reduce.begin(), steady_reduce.end());
  result.median_allreduce_s =
      n % 2 ? steady_reduce[n / 2] : 0.5 * (steady_reduce[n / 2 - 1] + steady_reduce[n / 2]);
  return result;
}

}  // namespace tt::train
