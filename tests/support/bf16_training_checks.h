// The bf16 training checks every backend passes, written once: tests/train runs them on the CPU,
// tests/cuda on a GPU. bf16 products (Backend::set_matmul_precision(bf16)) against fp32 on the same tiny
// model: one step's loss (relative 1e-2) and gradient (3e-2, see below) within bf16 tolerance, and 300
// steps of the copy task on the fp32 loss curve within the noise of another initialisation.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "nn/transformer.h"
#include "train/synthetic.h"
#include "train/trainer.h"

namespace tt::test {

// A backend in fp32, or in bf16 precision (bf16 = true).
using Bf16BackendFactory = std::function<std::unique_ptr<backend::Backend>(bool bf16)>;

// The tiny model both checks train: 2 + 2 layers of width 32, no dropout.
inline nn::ModelConfig bf16_check_model() {
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

// ||a - b|| / ||b|| over [begin, end).
inline double relative_error(const std::vector<float>& a, const std::vector<float>& b, size_t begin, size_t end) {
  double diff = 0, norm = 0;
  for (size_t i = begin; i < end; ++i) {
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    norm += static_cast<double>(b[i]) * b[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

// One training step in fp32 and in bf16 from the same init: loss and gradient within bf16 tolerance.
inline void check_bf16_step_against_fp32(const Bf16BackendFactory& make) {
  const auto config = bf16_check_model();
  double loss[2];
  std::vector<float> grads[2];
  struct Slice {
    std::string name;
    size_t begin, end;
  };
  std::vector<Slice> params;  // (names and places only: the model's tensors die with its backend)
  for (int bf16 = 0; bf16 < 2; ++bf16) {
    auto be = make(bf16 == 1);
    nn::Transformer model(config, *be);
    model.init_parameters(7);
    train::SyntheticBatches source(config, train::SyntheticTask::random, 8, 9, 7, 5);
    train::Trainer trainer(model, source, {});
    const auto stats = trainer.step();  // Adam leaves the step's gradient in place
    loss[bf16] = stats.loss();
    grads[bf16] = model.params().grads().to_host_f32();
    if (bf16 == 0)
      for (const auto& p : model.params().all())
        params.push_back({p.name, static_cast<size_t>(p.offset), static_cast<size_t>(p.offset + p.shape.numel())});
  }
  CHECK(loss[0] > 2.0);
  CHECK(std::abs(loss[1] - loss[0]) <= 1e-2 * loss[0]);
  CHECK(loss[1] != loss[0]);  // the products really ran in bf16
  // The gradient: each matrix product rounds its operands to bf16 (unit roundoff 2^-8, ~0.3 % error per
  // product on random data) and backward chains ~10 of them; where a gradient sums many nearly cancelling
  // terms (an FFN's first layer: its error is ~10x its second's) the error grows. The whole gradient comes
  // out 1.6-2.6 % off over init seeds 7-9 (measured). PyTorch's bf16 autocast on the same architecture
  // and init is as far off (bench/bf16_grad_error.py): 1.5-2.8 % over three seeds, and 3.3-4.9 % vs
  // tt's 3.9-4.2 % at tiny, 3.2-3.5 % vs 2.9-3.4 % at small. 1e-2 norm-wise is beyond bf16 operands on
  // this init (PyTorch's own init, smaller weights, gives it 0.8-1.1 %): checked within 3e-2, each tensor
  // within 5e-2. Tensors whose true gradient is ~0 (k_proj.bias: softmax ignores a constant shift) are
  // left out.
  const double total = relative_error(grads[1], grads[0], 0, grads[0].size());
  CHECK(total <= 3e-2);
  CHECK(total > 0);
  const std::vector<float> zero(grads[0].size(), 0.0f);
  const double global_norm = relative_error(grads[0], zero, 0, grads[0].size());
  int compared = 0;
  for (const auto& p : params) {
    const size_t begin = p.begin, end = p.end;
    if (relative_error(grads[0], zero, begin, end) < 1e-4 * global_norm) continue;
    const double err = relative_error(grads[1], grads[0], begin, end);
    INFO(p.name << ": relative gradient error " << err);
    CHECK(err <= 5e-2);
    ++compared;
  }
  CHECK(compared >= static_cast<int>(params.size()) - 6);  // the k_proj biases (2 + 2 self, 2 cross) at most
}

// 300 steps of the copy task in fp32 (two inits) and bf16: bf16 follows the fp32 curve as closely as
// another fp32 initialisation does.
inline void check_bf16_copy_task_curve(const Bf16BackendFactory& make) {
  const auto config = bf16_check_model();
  train::SyntheticOptions o;
  o.steps = 300;
  o.batch_size = 16;
  o.src_len = o.tgt_len = 8;
  o.warmup_steps = 30;
  o.lr_scale = 0.3;
  o.task = train::SyntheticTask::copy;
  // fp32 from two initialisations (the noise: how far two equally good runs drift apart) and bf16 from
  // the first one.
  struct Run {
    bool bf16;
    uint64_t init_seed;
  };
  std::vector<double> losses[3];
  const Run runs[3] = {{false, 3}, {false, 4}, {true, 3}};
  for (int r = 0; r < 3; ++r) {
    auto be = make(runs[r].bf16);
    nn::Transformer model(config, *be);
    model.init_parameters(runs[r].init_seed);
    losses[r] = train::train_synthetic(model, o, {}).losses;
    REQUIRE(losses[r].size() == 300u);
  }
  // Mean loss over windows of 50 steps. Each run learns the task (its last window below half its first),
  // and bf16 stays as close to fp32 as another fp32 initialisation does (summed over the windows, with
  // 2 % of the loss as a floor for runs that happen to agree closely).
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

}  // namespace tt::test
