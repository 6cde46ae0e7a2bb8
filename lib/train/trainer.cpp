#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ops/elementwise.h"
#include "ops/kept_bf16.h"
#include "util/check.h"
#include "util/error.h"

namespace tt::train {

namespace {

// The weights' bf16 copy for one step's forward and backward (Backend::hold_bf16_weights; nothing in
// fp32), released before the optimizer changes the weights, also when the step throws. written: the
// previous step's optimizer wrote the copy (Backend::bf16_weights_to_write), so none is made here.
class Bf16WeightsHold {
 public:
  Bf16WeightsHold(backend::Backend& backend, const tensor::Tensor& values, bool written) : backend_(backend) {
    if (written) backend_.hold_written_bf16_weights(values.f32(), values.numel());
    else backend_.hold_bf16_weights(values.f32(), values.numel());
  }
  ~Bf16WeightsHold() { backend_.release_bf16_weights(); }
  Bf16WeightsHold(const Bf16WeightsHold&) = delete;
  Bf16WeightsHold& operator=(const Bf16WeightsHold&) = delete;

 private:
  backend::Backend& backend_;
};


using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

void check_trainer_options(const TrainerOptions& options) {
  if (options.accum < 1)
    throw ConfigError(option_ref("accum") + " (" + std::to_string(options.accum) + ") must be at least 1");
  if (!(options.clip_norm >= 0) || !std::isfinite(options.clip_norm))
    throw ConfigError(option_ref("clip_norm") + " must be 0 (off) or a positive number");
  if (!(options.adam.weight_decay >= 0) || !std::isfinite(options.adam.weight_decay))
    throw ConfigError(option_ref("weight_decay") + " must be 0 or a positive number");
  if (options.bucket_floats < 1) throw ConfigError("the all-reduce bucket size must be at least 1 float");
  if (!(options.ema_decay >= 0 && options.ema_decay < 1))
    throw ConfigError(option_ref("ema_decay") + " must be in [0, 1) (0: off; e.g. 0.9999)");
}

double StepStats::ppl() const { return tokens ? std::exp(nll_sum / static_cast<double>(tokens)) : 0.0; }

Trainer::Trainer(nn::Transformer& model, BatchSource& source, const TrainerOptions& options)
    : Trainer(model, source, options, std::make_unique<dist::LocalCommunicator>(), nullptr) {}

Trainer::Trainer(nn::Transformer& model, BatchSource& source, const TrainerOptions& options, dist::Communicator& comm)
    : Trainer(model, source, options, nullptr, &comm) {}

Trainer::Trainer(nn::Transformer& model, BatchSource& source, const TrainerOptions& options,
                 std::unique_ptr<dist::Communicator> own_comm, dist::Communicator* comm)
    : own_comm_(std::move(own_comm)),
      comm_(comm ? *comm : *own_comm_),
      model_(model),
      source_(source),
      options_(options),
      schedule_(model.config().d_model, options.schedule),
      adam_(model.params(), options.adam),
      arena_(model.backend()) {
  check_trainer_options(options);
  if (options.ema_decay > 0) average_.emplace(model.params(), options.ema_decay);
}

// The flat gradient in buckets of options_.bucket_floats: few, large messages (each all-reduce has a fixed
// latency) without one giant temporary. Device memory goes through a host buffer unless the communicator
// takes it directly.
void Trainer::all_reduce_grads() {
  const tensor::Tensor& grads = model_.params().grads();
  const int64_t n = grads.numel(), bucket = options_.bucket_floats;
  float* data = grads.f32();
  if (grads.backend().device() == backend::Device::cpu || comm_.accepts_device_memory()) {
    for (int64_t begin = 0; begin < n; begin += bucket) comm_.all_reduce_sum(data + begin, std::min(bucket, n - begin));
    return;
  }
  std::vector<float> host(static_cast<size_t>(std::min(bucket, n)));
  backend::Backend& backend = model_.backend();
  for (int64_t begin = 0; begin < n; begin += bucket) {
    const int64_t count = std::min(bucket, n - begin);
    const size_t bytes = static_cast<size_t>(count) * sizeof(float);
    backend.copy_to_host(host.data(), data + begin, bytes);
    comm_.all_reduce_sum(host.data(), count);
    backend.copy_from_host(data + begin, host.data(), bytes);
  }
}

StepStats Trainer::step() {
  StepStats stats;
  stats.step = adam_.steps() + 1;
  const int ranks = comm_.size(), rank = comm_.rank();
  const int64_t global = batches_per_step();
  // Every rank reads all of the step's batches (so every source stays at the same position) and keeps its
  // share. All of them first: the loss is scaled by the whole step's target tokens, so the update does not
  // depend on how the tokens are split into batches or ranks.
  std::vector<std::pair<int64_t, nn::Batch>> mine;
  mine.reserve(static_cast<size_t>(options_.accum));
  int64_t counts[2] = {0, 0};  // target tokens, source tokens of this rank's batches
  for (int64_t g = 0; g < global; ++g) {
    nn::Batch batch = source_.next();
    if (g % ranks != rank) continue;
    counts[0] += batch.target_tokens();
    for (int32_t length : batch.src_lengths) counts[1] += length;
    mine.emplace_back(g, std::move(batch));
  }
  stats.batches = static_cast<int>(global);
  const auto t0 = Clock::now();
  double reduce_s = 0;
  auto timed_reduce = [&](auto&& reduce) {
    const auto r0 = Clock::now();
    reduce();
    reduce_s += seconds_since(r0);
  };
  timed_reduce([&] { comm_.all_reduce_sum(counts, 2); });
  stats.tokens = counts[0];
  stats.src_tokens = counts[1];
  nn::ParameterSet& params = model_.params();
  params.zero_grad_lazily();  // a Linear's first product overwrites its weight's gradient
  const float grad_scale = 1.0f / static_cast<float>(std::max<int64_t>(stats.tokens, 1));
  std::optional<Bf16WeightsHold> bf16_weights(std::in_place, model_.backend(), params.values(), bf16_copy_written_);
  for (const auto& [g, batch] : mine) {
    tensor::ArenaScope scope(arena_);
    const nn::LossStats loss = model_.forward_backward(
        batch, arena_, nn::StepRng{options_.seed, stats.step, true, static_cast<uint64_t>(g)}, grad_scale);
    stats.loss_sum += loss.loss_sum;
    stats.nll_sum += loss.nll_sum;
  }
  params.finish_gradients();
  bf16_weights.reset();
  // Every bf16 operand a layer kept is released by its backward (ops::KeptBf16): one left alive now would
  // forget a range of the next step. Checked always; it costs one load.
  TT_CHECK_MSG(ops::KeptBf16::alive() == 0,
               std::to_string(ops::KeptBf16::alive()) + " kept bf16 operands outlive the training step");
  if (ranks > 1) {
    model_.backend().synchronize();
    double losses[2] = {stats.loss_sum, stats.nll_sum};
    timed_reduce([&] {
      comm_.all_reduce_sum(losses, 2);
      all_reduce_grads();
    });
    stats.loss_sum = losses[0];
    stats.nll_sum = losses[1];
  }
  // Every rank sees the same sums, so every rank stops here alike.
  if (!std::isfinite(stats.loss_sum))
    throw Error("step " + std::to_string(stats.step) + ": the training loss is not finite (" +
                    std::to_string(stats.loss_sum) + "); the model diverged",
                "lower the learning rate (" + option_ref("lr_scale") + " or " + option_ref("lr") + "), lengthen " +
                    option_ref("warmup_steps") + " or set " + option_ref("clip_norm") +
                    ", and restart from the last checkpoint");
  if (options_.clip_norm > 0) {
    stats.grad_norm = std::sqrt(ops::sum_squares(params.grads()));
    if (!std::isfinite(stats.grad_norm))
      throw Error("step " + std::to_string(stats.step) + ": the gradient norm is not finite",
                  "lower the learning rate and restart from the last checkpoint");
    if (stats.grad_norm > options_.clip_norm)
      ops::scale(params.grads(), static_cast<float>(options_.clip_norm / stats.grad_norm));
  }
  stats.lr = schedule_.lr(stats.step);
  // The optimizer writes the next step's bf16 copy of the weights as it updates them (one pass, not two).
  uint16_t* bf16_copy = model_.backend().bf16_weights_to_write(params.values().numel());
  adam_.step(params, static_cast<float>(stats.lr), bf16_copy);
  bf16_copy_written_ = bf16_copy != nullptr;
  if (average_) average_->update(params);
  model_.backend().synchronize();
  stats.seconds = seconds_since(t0);
  stats.allreduce_seconds = reduce_s;
  return stats;
}

void broadcast_parameters(dist::Communicator& comm, nn::ParameterSet& params) {
  if (comm.size() == 1) return;
  std::vector<float> host = params.values().to_host_f32();
  comm.broadcast(host.data(), static_cast<int64_t>(host.size() * sizeof(float)), 0);
  params.values().backend().copy_from_host(params.values().f32(), host.data(), host.size() * sizeof(float));
}

}  // namespace tt::train
