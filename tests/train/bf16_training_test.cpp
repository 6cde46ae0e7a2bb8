// bf16 training (Backend::set_matmul_precision(bf16)) against fp32 on the same tiny model: the two checks
// every backend passes (support/bf16_training_checks.h) on the CPU, and the CPU's own bf16 bookkeeping: a
// step's forward and backward forget every operand they keep in bf16. Skipped, with a note, on processors
// without bf16 instructions (the refusal itself is tested in tests/backend/gemm_bf16_test.cpp and
// tt_train_cli_test.cpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/cpu_backend.h"
#include "nn/transformer.h"
#include "support/bf16_training_checks.h"
#include "support/grad_check.h"
#include "tensor/arena.h"
#include "train/synthetic.h"
#include "train/trainer.h"

namespace {

tt::nn::ModelConfig tiny() { return tt::test::bf16_check_model(); }

std::unique_ptr<tt::backend::Backend> backend(bool bf16) {
  auto be = tt::backend::make_backend("cpu", 1);
  if (bf16 && !be->set_matmul_precision(tt::backend::MatmulPrecision::bf16)) return nullptr;
  return be;
}

}  // namespace

TEST_CASE("bf16: one training step's loss and gradients are within 1e-2 of fp32", "[trainer][bf16]") {
  if (!backend(true)) {
    WARN("no bf16 instructions on this processor: bf16 training not tested here");
    return;
  }
  tt::test::check_bf16_step_against_fp32(backend);
}

TEST_CASE("bf16: 300 steps of the copy task follow the fp32 loss curve", "[trainer][bf16]") {
  if (!backend(true)) {
    WARN("no bf16 instructions on this processor: bf16 training not tested here");
    return;
  }
  tt::test::check_bf16_copy_task_curve(backend);
}

namespace {

// tiny() with dropout 0.1 everywhere and the given norm placement.
tt::nn::ModelConfig with_dropout(tt::nn::NormPlacement placement) {
  auto config = tiny();
  config.norm = placement;
  config.dropout = config.attention_dropout = config.relu_dropout = 0.1f;
  return config;
}

const char* name(tt::nn::NormPlacement placement) { return placement == tt::nn::NormPlacement::post ? "post" : "pre"; }

constexpr int kB = 4, kS = 6, kT = 5;  // bf16_step's batch: sentences, source and target length

// One forward_backward of a fresh `config` model (init seed 5) on a 4-sentence random batch, the weights
// held (every bf16 copy on) when `hold`: the loss, the gradient, the elements converted by a pass of their
// own, and the kept ranges left behind.
struct Step {
  double loss;
  std::vector<float> grads;
  int64_t converted, kept_after;
  size_t arena_bytes;  // the step arena's high water: the activations saved for backward
};
Step bf16_step(tt::backend::Backend& be, const tt::nn::ModelConfig& config, bool hold) {
  auto& cpu = dynamic_cast<tt::backend::cpu::CpuBackend&>(be);
  tt::nn::Transformer model(config, be);
  model.init_parameters(5);
  const auto batch = tt::train::synthetic_batch(config, tt::train::SyntheticTask::random, kB, kS, kT, 2, 1);
  tt::tensor::Arena arena(be);
  model.params().zero_grad();
  if (hold) be.hold_bf16_weights(model.params().values().f32(), model.params().values().numel());
  const int64_t before = cpu.bf16_converted();
  Step step{};
  {
    tt::tensor::ArenaScope scope(arena);
    step.loss = model.forward_backward(batch, arena, tt::nn::StepRng{1, 1, true}, 1.0f).loss_sum;
  }
  step.arena_bytes = arena.high_water_bytes();
  step.converted = cpu.bf16_converted() - before;
  step.kept_after = cpu.bf16_kept_ranges();
  if (hold) be.release_bf16_weights();
  step.grads = model.params().grads().to_host_f32();
  return step;
}

// A bf16 backend, or null after a note where the processor has no bf16 instructions.
std::unique_ptr<tt::backend::Backend> bf16_backend_or_note() {
  auto be = backend(true);
  if (!be) WARN("no bf16 instructions on this processor: bf16 training not tested here");
  return be;
}

// check(backend, placement) for post-LN and pre-LN on a bf16 backend (a note where the CPU has none).
void for_both_norms(const std::function<void(tt::backend::Backend&, tt::nn::NormPlacement)>& check) {
  auto be = bf16_backend_or_note();
  if (!be) return;
  for (const auto placement : {tt::nn::NormPlacement::post, tt::nn::NormPlacement::pre}) {
    INFO("norm " << name(placement));
    check(*be, placement);
  }
}

}  // namespace

TEST_CASE("bf16: a batch's forward and backward forget every operand they keep", "[trainer][bf16]") {
  // Kept bf16 copies live until forgotten or the weights are released: one left behind after a batch
  // would hand the next batch (gradient accumulation, same held weights) the copy of a dead activation
  // at a reused address.
  for_both_norms([](tt::backend::Backend& be, tt::nn::NormPlacement placement) {
    CHECK(bf16_step(be, with_dropout(placement), true).kept_after == 0);
  });
}

TEST_CASE("bf16: no separate conversion pass for the FFN hidden layer, the attention weights or their gradients",
          "[trainer][bf16]") {
  // Their kernels (bias + ReLU + dropout, softmax, dropout, and the backward of each) write the bf16 copies
  // the products read. Then a step converts as many elements whatever d_ff and the number of heads: every
  // operand that still takes a pass of its own (GEMM outputs: q, k, v, the context and their gradients) is
  // sized by d_model alone.
  for_both_norms([](tt::backend::Backend& be, tt::nn::NormPlacement placement) {
    auto narrow = with_dropout(placement), wide = narrow;
    wide.d_ff = 2 * narrow.d_ff;
    wide.heads = 2 * narrow.heads;
    const int64_t converted = bf16_step(be, narrow, true).converted;
    CHECK(converted > 0);
    CHECK(bf16_step(be, wide, true).converted == converted);
  });
}

TEST_CASE("bf16: a step through held weights and kept copies gives the bits of one converting every operand",
          "[trainer][bf16]") {
  // Holding the weights turns on every copy (held weights, kept operands, kernel-written copies); without
  // it each product converts its operands itself. Rounding is deterministic, so the two must agree bit for
  // bit: a stale, mislaid or badly written copy shows as a difference. Dropout on everywhere, both norms.
  for_both_norms([](tt::backend::Backend& be, tt::nn::NormPlacement placement) {
    const Step converting = bf16_step(be, with_dropout(placement), false);
    const Step copying = bf16_step(be, with_dropout(placement), true);
    CHECK(converting.loss == copying.loss);
    CHECK(converting.grads == copying.grads);
  });
}

TEST_CASE("bf16: a step saves the FFN hidden layer and attention's q, k, v, dropped weights and context only in bf16",
          "[trainer][bf16]") {
  // Every reader of the hidden layer (fc2's two products, the ReLU/dropout mask), of q, k, v (the attention
  // products, as are the weights after dropout) and of the context (the output projection's two products)
  // takes it rounded, so a held step saves them as bf16 alone: the step arena shrinks by exactly the
  // fp32 - bf16 difference of each, with the same bits (the test above). q, k, v are saved per head,
  // [B, H, T, Dh].
  for_both_norms([](tt::backend::Backend& be, tt::nn::NormPlacement placement) {
    const auto config = with_dropout(placement);
    const Step fp32_saved = bf16_step(be, config, false), bf16_saved = bf16_step(be, config, true);
    using tt::tensor::Arena, tt::tensor::DType, tt::tensor::Shape;
    auto f32 = [](Shape s) { return Arena::rounded_bytes(s, DType::f32); };
    auto bf16 = [](Shape s) { return Arena::rounded_bytes(s, DType::bf16); };
    auto saving = [&](Shape s) { return f32(s) - bf16(s); };
    const int64_t D = config.d_model, H = config.heads, Dh = D / H;
    const Shape src_heads{kB, H, kS, Dh}, tgt_heads{kB, H, kT, Dh};
    REQUIRE(config.attention_dropout > 0);
    const size_t encoder = saving({kB * kS, config.d_ff}) + saving({kB, kS, D}) +  // FFN, context
                           f32({kB, kS, 3 * D}) - 3 * bf16(src_heads) +            // q|k|v
                           saving({kB, H, kS, kS});                                // weights after dropout
    const size_t decoder = saving({kB * kT, config.d_ff}) + 2 * saving({kB, kT, D}) +  // FFN, both contexts
                           f32({kB, kT, 3 * D}) - 3 * bf16(tgt_heads) +                  // self q|k|v
                           f32({kB, kT, D}) + f32({kB, kS, 2 * D}) - bf16(tgt_heads) - 2 * bf16(src_heads) +  // cross
                           saving({kB, H, kT, kT}) + saving({kB, H, kT, kS});  // self and cross weights
    CHECK(fp32_saved.arena_bytes - bf16_saved.arena_bytes ==
          config.n_layers_enc * encoder + config.n_layers_dec * decoder);
  });
}

TEST_CASE("bf16: steps through the weights' copy the optimizer wrote give the bits of converting them",
          "[trainer][bf16]") {
  // From its second step a trainer adopts the bf16 copy its optimizer wrote while updating the weights; a
  // fresh trainer (a resumed run) converts them instead. Three steps straight and one step, then a new
  // trainer taking the optimizer's state for two more, must end on the same bits.
  auto be = bf16_backend_or_note();
  if (!be) return;
  const auto config = with_dropout(tt::nn::NormPlacement::post);
  auto train = [&](bool restart) {
    tt::nn::Transformer model(config, *be);
    model.init_parameters(5);
    tt::train::SyntheticBatches source(config, tt::train::SyntheticTask::random, kB, kS, kT, 3);
    auto first = std::make_unique<tt::train::Trainer>(model, source, tt::train::TrainerOptions{});
    first->step();
    if (restart) {
      const auto m = first->optimizer().m().to_host_f32(), v = first->optimizer().v().to_host_f32();
      first = std::make_unique<tt::train::Trainer>(model, source, tt::train::TrainerOptions{});
      first->optimizer().load_state(m, v, 1);
    }
    first->step();
    first->step();
    return model.params().values().to_host_f32();
  };
  const auto straight = train(false), restarted = train(true);
  CHECK(std::memcmp(straight.data(), restarted.data(), straight.size() * sizeof(float)) == 0);
}

TEST_CASE("bf16: weights changed after the optimizer wrote their copy are refused, not trained on stale",
          "[trainer][bf16]") {
  auto be = bf16_backend_or_note();
  if (!be) return;
  const auto config = tiny();
  tt::nn::Transformer model(config, *be);
  model.init_parameters(5);
  tt::train::SyntheticBatches source(config, tt::train::SyntheticTask::random, kB, kS, kT, 3);
  tt::train::Trainer trainer(model, source, {});
  trainer.step();
  model.params().values().zero();
  CHECK_THROWS_WITH(trainer.step(), Catch::Contains("changed after the optimizer wrote their bf16 copy"));
}

TEST_CASE("bf16: lazily zeroed gradients equal zeroed ones bit for bit, over two accumulated batches",
          "[trainer][bf16]") {
  // The weight-gradient products of bf16 operands overwrite (beta 0) on a step's first batch, as fp32's do
  // (nn::GradientStart); gradients a previous step left NaN show any first write that added instead.
  auto be = bf16_backend_or_note();
  if (!be) return;
  for (auto placement : {tt::nn::NormPlacement::post, tt::nn::NormPlacement::pre}) {
    const auto config = with_dropout(placement);
    auto gradient = [&](bool lazily) {
      tt::nn::Transformer model(config, *be);
      model.init_parameters(5);
      const tt::nn::ParameterSet& params = model.params();
      if (lazily) {
        tt::test::poison_gradients(params);
        params.zero_grad_lazily();
      } else {
        params.zero_grad();
      }
      tt::train::SyntheticBatches source(config, tt::train::SyntheticTask::random, kB, kS, kT, 3);
      tt::tensor::Arena arena(*be);
      be->hold_bf16_weights(params.values().f32(), params.values().numel());
      for (uint64_t g = 0; g < 2; ++g) {
        tt::tensor::ArenaScope scope(arena);
        model.forward_backward(source.next(), arena, tt::nn::StepRng{1, 1, true, g}, 0.5f);
      }
      be->release_bf16_weights();
      if (lazily) params.finish_gradients();
      return params.grads().to_host_f32();
    };
    const auto eager = gradient(false), lazy = gradient(true);
    REQUIRE(eager.size() == lazy.size());
    CHECK(std::memcmp(eager.data(), lazy.data(), eager.size() * sizeof(float)) == 0);
    int nonzero = 0;
    for (float g : eager) nonzero += g != 0.0f;
    CHECK(nonzero > int(eager.size()) / 2);
  }
}
