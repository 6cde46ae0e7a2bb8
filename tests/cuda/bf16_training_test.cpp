// bf16 training on CUDA (cuBLASLt products, fp32 master weights and Adam) against fp32 on CUDA, on the
// tiny model of tests/train/bf16_training_test.cpp: one step's loss and gradients within bf16 tolerance,
// and 300 steps of the copy task on the fp32 loss curve within the noise of another initialisation.
#include <catch2/catch.hpp>

#include <cmath>

#include "cuda/cuda_fixture.h"
#include "nn/transformer.h"
#include "train/synthetic.h"
#include "train/trainer.h"

using namespace tt;
using namespace tt::test;

namespace {

nn::ModelConfig tiny() {
  nn::ModelConfig c = nn::preset("tiny");
  c.d_model = 32;
  c.d_ff = 64;
  c.heads = 2;
  c.n_layers_enc = c.n_layers_dec = 2;
  c.vocab_size_src = c.vocab_size_tgt = 24;
  c.dropout = c.attention_dropout = c.relu_dropout = 0;
  c.max_positions = 64;
  return c;
}

std::unique_ptr<backend::Backend> gpu_backend(bool bf16) {
  auto gpu = require_cuda();
  if (bf16) REQUIRE(gpu->set_matmul_precision(backend::MatmulPrecision::bf16));
  return gpu;
}

// ||a - b|| / ||b|| over [begin, end).
double relative_error(const std::vector<float>& a, const std::vector<float>& b, size_t begin, size_t end) {
  double diff = 0, norm = 0;
  for (size_t i = begin; i < end; ++i) {
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

}  // namespace

TEST_CASE("cuda bf16: one training step's loss and gradients are within bf16 tolerance of fp32", "[cuda]") {
  const auto config = tiny();
  double loss[2];
  std::vector<float> grads[2];
  struct Slice {
    std::string name;
    size_t begin, end;
  };
  std::vector<Slice> params;
  for (int bf16 = 0; bf16 < 2; ++bf16) {
    auto be = gpu_backend(bf16 == 1);
    nn::Transformer model(config, *be);
    model.init_parameters(7);
    train::SyntheticBatches source(config, train::SyntheticTask::random, 8, 9, 7, 5);
    train::Trainer trainer(model, source, {});
    const auto stats = trainer.step();  // Adam leaves the step's gradient in place
    loss[bf16] = stats.loss();
    grads[bf16] = model.params().grads().to_host_f32();
    if (bf16 == 0)
      for (const auto& p : model.params().all())
        params.push_back({p.name, size_t(p.offset), size_t(p.offset + p.shape.numel())});
  }
  CHECK(loss[0] > 2.0);
  CHECK(std::abs(loss[1] - loss[0]) <= 1e-2 * loss[0]);
  CHECK(loss[1] != loss[0]);  // the products really ran in bf16
  // Bounds as on the CPU (tests/train/bf16_training_test.cpp): ~10 chained bf16 products in backward.
  const double total = relative_error(grads[1], grads[0], 0, grads[0].size());
  CHECK(total <= 3e-2);
  CHECK(total > 0);
  const std::vector<float> zero(grads[0].size(), 0.0f);
  const double global_norm = relative_error(grads[0], zero, 0, grads[0].size());
  int compared = 0;
  for (const auto& p : params) {
    if (relative_error(grads[0], zero, p.begin, p.end) < 1e-4 * global_norm) continue;
    const double err = relative_error(grads[1], grads[0], p.begin, p.end);
    INFO(p.name << ": relative gradient error " << err);
    CHECK(err <= 5e-2);
    ++compared;
  }
  CHECK(compared >= int(params.size()) - 6);  // the k_proj biases at most (softmax ignores a shift)
}

TEST_CASE("cuda bf16: 300 steps of the copy task follow the fp32 loss curve", "[cuda]") {
  const auto config = tiny();
  train::SyntheticOptions o;
  o.steps = 300;
  o.batch_size = 16;
  o.src_len = o.tgt_len = 8;
  o.warmup_steps = 30;
  o.lr_scale = 0.3;
  o.task = train::SyntheticTask::copy;
  struct Run {
    bool bf16;
    uint64_t init_seed;
  };
  const Run runs[3] = {{false, 3}, {false, 4}, {true, 3}};  // fp32 twice (the noise), bf16 from the first init
  std::vector<double> losses[3];
  for (int r = 0; r < 3; ++r) {
    auto be = gpu_backend(runs[r].bf16);
    nn::Transformer model(config, *be);
    model.init_parameters(runs[r].init_seed);
    losses[r] = train::train_synthetic(model, o, {}).losses;
    REQUIRE(losses[r].size() == 300u);
  }
  auto window = [](const std::vector<double>& l, size_t w) {
    double sum = 0;
    for (size_t i = w * 50; i < (w + 1) * 50; ++i) sum += l[i];
    return sum / 50;
  };
  double bf16_drift = 0, seed_drift = 0, scale = 0;
  for (size_t w = 0; w < 6; ++w) {
    INFO("steps " << w * 50 + 1 << "-" << (w + 1) * 50 << ": fp32 " << window(losses[0], w) << ", fp32 (init 4) "
                  << window(losses[1], w) << ", bf16 " << window(losses[2], w));
    bf16_drift += std::abs(window(losses[2], w) - window(losses[0], w));
    seed_drift += std::abs(window(losses[1], w) - window(losses[0], w));
    scale += window(losses[0], w);
  }
  for (const auto& l : losses) CHECK(window(l, 5) < 0.5 * window(l, 0));
  INFO("summed window drift: bf16 " << bf16_drift << ", other init " << seed_drift);
  CHECK(bf16_drift <= std::max(seed_drift, 0.02 * scale));
}
