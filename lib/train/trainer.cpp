#include "train/trainer.h"

#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "ops/elementwise.h"
#include "util/error.h"

namespace tt::train {

namespace {

// The weights' bf16 copy for one step's forward and backward (Backend::hold_bf16_weights; nothing in
// fp32), released before the optimizer changes the weights, also when the step throws.
class Bf16WeightsHold {
 public:
  Bf16WeightsHold(backend::Backend& backend, const tensor::Tensor& values) : backend_(backend) {
    backend_.hold_bf16_weights(values.f32(), values.numel());
  }
  ~Bf16WeightsHold() { backend_.release_bf16_weights(); }
  Bf16WeightsHold(const Bf16WeightsHold&) = delete;
  Bf16WeightsHold& operator=(const Bf16WeightsHold&) = delete;

 private:
  backend::Backend& backend_;
};

}  // namespace

double StepStats::ppl() const { return tokens ? std::exp(nll_sum / static_cast<double>(tokens)) : 0.0; }

Trainer::Trainer(nn::Transformer& model, BatchSource& source, const TrainerOptions& options)
    : model_(model),
      source_(source),
      options_(options),
      schedule_(model.config().d_model, options.schedule),
      adam_(model.params(), options.adam),
      arena_(model.backend()) {
  if (options.accum < 1) throw ConfigError("--accum (" + std::to_string(options.accum) + ") must be at least 1");
  if (!(options.clip_norm >= 0) || !std::isfinite(options.clip_norm))
    throw ConfigError("--clip-norm must be 0 (off) or a positive number");
  if (!(options.adam.weight_decay >= 0) || !std::isfinite(options.adam.weight_decay))
    throw ConfigError("--weight-decay must be 0 or a positive number");
}

StepStats Trainer::step() {
  StepStats stats;
  stats.step = adam_.steps() + 1;
  // All K batches first: the loss is scaled by the whole step's target tokens, so the update does not
  // depend on how the tokens are split into batches.
  std::vector<nn::Batch> batches;
  batches.reserve(static_cast<size_t>(options_.accum));
  for (int k = 0; k < options_.accum; ++k) {
    batches.push_back(source_.next());
    stats.tokens += batches.back().target_tokens();
    for (int32_t length : batches.back().src_lengths) stats.src_tokens += length;
  }
  stats.batches = options_.accum;
  const auto t0 = std::chrono::steady_clock::now();
  nn::ParameterSet& params = model_.params();
  params.zero_grad();
  const float grad_scale = 1.0f / static_cast<float>(std::max<int64_t>(stats.tokens, 1));
  std::optional<Bf16WeightsHold> bf16_weights(std::in_place, model_.backend(), params.values());
  for (int k = 0; k < options_.accum; ++k) {
    tensor::ArenaScope scope(arena_);
    const int64_t micro_step = (stats.step - 1) * options_.accum + k + 1;
    const nn::LossStats loss = model_.forward_backward(batches[static_cast<size_t>(k)], arena_,
                                                       nn::StepRng{options_.seed, micro_step, true}, grad_scale);
    stats.loss_sum += loss.loss_sum;
    stats.nll_sum += loss.nll_sum;
  }
  bf16_weights.reset();
  if (!std::isfinite(stats.loss_sum))
    throw Error("step " + std::to_string(stats.step) + ": the training loss is not finite (" +
                    std::to_string(stats.loss_sum) + "); the model diverged",
                "lower the learning rate (--lr-scale or --lr), lengthen --warmup-steps or set --clip-norm, and "
                "restart from the last checkpoint");
  if (options_.clip_norm > 0) {
    stats.grad_norm = std::sqrt(ops::sum_squares(params.grads()));
    if (!std::isfinite(stats.grad_norm))
      throw Error("step " + std::to_string(stats.step) + ": the gradient norm is not finite",
                  "lower the learning rate and restart from the last checkpoint");
    if (stats.grad_norm > options_.clip_norm)
      ops::scale(params.grads(), static_cast<float>(options_.clip_norm / stats.grad_norm));
  }
  stats.lr = schedule_.lr(stats.step);
  adam_.step(params, static_cast<float>(stats.lr));
  model_.backend().synchronize();
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return stats;
}

}  // namespace tt::train
