// The training step on a tiny model: gradient accumulation, clipping, the schedule, and a diverged loss.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>

#include "backend/backend.h"
#include "nn/transformer.h"
#include "ops/elementwise.h"
#include "train/synthetic.h"
#include "train/trainer.h"

namespace {

tt::nn::ModelConfig tiny(float dropout) {
  tt::nn::ModelConfig c = tt::nn::preset("tiny");
  c.d_model = 16;
  c.d_ff = 32;
  c.heads = 2;
  c.n_layers_enc = c.n_layers_dec = 1;
  c.vocab_size_src = c.vocab_size_tgt = 20;
  c.dropout = dropout;
  c.attention_dropout = c.relu_dropout = 0;
  c.max_positions = 64;
  return c;
}

// The same batch, `copies` times in a row.
class Repeat : public tt::train::BatchSource {
 public:
  Repeat(tt::nn::Batch batch) : batch_(std::move(batch)) {}
  tt::nn::Batch next() override {
    ++position_.index;
    return batch_;
  }
  tt::train::BatchPosition position() const override { return position_; }
  void seek(tt::train::BatchPosition p) override { position_ = p; }
  int64_t batches_per_epoch() const override { return 0; }

 private:
  tt::nn::Batch batch_;
  tt::train::BatchPosition position_;
};

std::vector<float> values(const tt::nn::Transformer& m) { return m.params().values().to_host_f32(); }

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("Trainer: K accumulated copies of a batch give the gradient one copy gives", "[trainer]") {
  auto backend = tt::backend::make_backend("cpu", 1);
  const auto config = tiny(0.0f);  // no dropout: the micro-steps' masks would differ
  const auto batch = tt::train::synthetic_batch(config, tt::train::SyntheticTask::random, 3, 5, 4, 7, 1);
  std::vector<float> grads[2];
  for (int accum : {1, 3}) {
    tt::nn::Transformer model(config, *backend);
    model.init_parameters(3);
    Repeat source(batch);
    tt::train::TrainerOptions o;
    o.accum = accum;
    o.schedule.warmup_steps = 10;
    tt::train::Trainer trainer(model, source, o);
    for (int s = 0; s < 2; ++s) {
      const auto stats = trainer.step();
      CHECK(stats.step == s + 1);
      CHECK(stats.batches == accum);
      CHECK(stats.tokens == accum * 12);
      CHECK(stats.src_tokens == accum * 15);
      CHECK(stats.lr == trainer.lr(s + 1));
      CHECK(stats.loss() > 2.0);
      // Adam leaves the step's gradient in place. After step 1 the parameters differ by rounding that
      // Adam's first update (lr * sign g) amplifies, so compare step 1.
      if (s == 0) grads[accum == 1 ? 0 : 1] = model.params().grads().to_host_f32();
    }
    CHECK(source.position().index == 2 * accum);
    CHECK(trainer.steps() == 2);
  }
  // The loss is scaled by the whole step's target tokens, so the mean gradient does not depend on K
  // (up to float rounding of the accumulation).
  double largest = 0, worst = 0;
  for (size_t i = 0; i < grads[0].size(); ++i) {
    largest = std::max(largest, static_cast<double>(std::fabs(grads[0][i])));
    worst = std::max(worst, static_cast<double>(std::fabs(grads[0][i] - grads[1][i])));
  }
  CHECK(largest > 1e-3);
  CHECK(worst < 1e-5 * largest);
}

TEST_CASE("Trainer: --clip-norm scales the gradient to the bound, and only above it", "[trainer]") {
  auto backend = tt::backend::make_backend("cpu", 1);
  const auto config = tiny(0.1f);
  const auto batch = tt::train::synthetic_batch(config, tt::train::SyntheticTask::random, 2, 4, 4, 1, 1);
  for (double clip : {1e-3, 1e6}) {
    tt::nn::Transformer model(config, *backend);
    model.init_parameters(1);
    Repeat source(batch);
    tt::train::TrainerOptions o;
    o.clip_norm = clip;
    tt::train::Trainer trainer(model, source, o);
    const auto stats = trainer.step();
    REQUIRE(stats.grad_norm > 1e-3);
    REQUIRE(stats.grad_norm < 1e6);
    // Adam leaves the gradient in place: it is what the update used.
    const double norm = std::sqrt(tt::ops::sum_squares(model.params().grads()));
    CHECK(norm == Approx(std::min(clip, stats.grad_norm)).epsilon(1e-4));
  }
}

TEST_CASE("Trainer: a loss that is not finite stops with the step named, parameters untouched", "[trainer]") {
  auto backend = tt::backend::make_backend("cpu", 1);
  const auto config = tiny(0.0f);
  tt::nn::Transformer model(config, *backend);
  model.init_parameters(1);
  Repeat source(tt::train::synthetic_batch(config, tt::train::SyntheticTask::random, 2, 4, 4, 1, 1));
  tt::train::Trainer trainer(model, source, {});
  trainer.step();
  // Poison one weight: the next loss is NaN.
  const auto& w = model.params().get("encoder.layers.0.ffn.fc1.weight").value;
  std::vector<float> host = w.to_host_f32();
  host[0] = std::numeric_limits<float>::infinity();
  w.backend().copy_from_host(w.f32(), host.data(), host.size() * sizeof(float));
  const auto before = values(model);
  CHECK_THROWS_WITH(trainer.step(), Catch::Contains("step 2") && Catch::Contains("not finite"));
  CHECK(same_bits(values(model), before));
  CHECK(trainer.steps() == 1);
}

TEST_CASE("Trainer: impossible options name the option field", "[trainer]") {
  auto backend = tt::backend::make_backend("cpu", 1);
  tt::nn::Transformer model(tiny(0.0f), *backend);
  Repeat source(tt::nn::Batch{});
  tt::train::TrainerOptions o;
  o.accum = 0;
  CHECK_THROWS_WITH(tt::train::Trainer(model, source, o), Catch::StartsWith("accum (0) must be at least 1"));
  o = {};
  o.clip_norm = -1;
  CHECK_THROWS_WITH(tt::train::Trainer(model, source, o), Catch::StartsWith("clip_norm must be 0 (off)"));
  o = {};
  o.schedule.kind = tt::train::LrScheduleKind::inverse_sqrt;
  o.schedule.peak_lr = -1;
  CHECK_THROWS_WITH(tt::train::Trainer(model, source, o), Catch::StartsWith("lr (-1.000000) must be a positive"));
}
