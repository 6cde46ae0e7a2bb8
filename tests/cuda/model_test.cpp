// The whole Transformer on the CUDA backend against the same model on the CPU backend: a training step with
// dropout on (the masks agree bit for bit, so losses and gradients agree to float rounding), a few Adam
// steps, the teacher-forced logits and incremental decoding with a KV cache. This catches model code that
// would only work with host-addressable tensors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cuda/cuda_fixture.h"
#include "nn/transformer.h"
#include "tensor/arena.h"
#include "train/synthetic.h"

using namespace tt;
using namespace tt::test;

namespace {

nn::ModelConfig small_config(nn::NormPlacement norm, nn::PositionKind positions) {
  nn::ModelConfig c;
  c.vocab_size_src = c.vocab_size_tgt = 101;
  c.d_model = 32;
  c.heads = 4;
  c.d_ff = 48;
  c.n_layers_enc = 2;
  c.n_layers_dec = 2;
  c.dropout = 0.1f;
  c.attention_dropout = 0.1f;
  c.relu_dropout = 0.1f;
  c.norm = norm;
  c.positions = positions;
  c.max_positions = 64;
  return c;
}

// A synthetic batch with right padding on one source and one target sentence.
nn::Batch padded_batch(const nn::ModelConfig& c) {
  const int B = 3, S = 7, T = 6;
  nn::Batch b = train::synthetic_batch(c, train::SyntheticTask::copy, B, S, T, 5, 1);
  b.src_lengths[1] = 4;
  for (int s = 4; s < S; ++s) b.src[1 * S + s] = c.pad_id;
  b.tgt_lengths[2] = 3;
  for (int t = 3; t < T; ++t) b.tgt_in[2 * T + t] = b.tgt_out[2 * T + t] = c.pad_id;
  return b;
}

// Tolerance relative to the largest magnitude: gradients near zero differ only by rounding of the others.
void check_close_scaled(const std::vector<float>& got, const std::vector<float>& want, double rtol) {
  double scale = 0.0;
  for (float v : want) scale = std::max(scale, double(std::abs(v)));
  check_close(got, want, rtol, rtol * scale);
}

}  // namespace

TEST_CASE("cuda transformer: a training step with dropout matches the CPU", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  for (auto norm : {nn::NormPlacement::post, nn::NormPlacement::pre}) {
    for (auto positions : {nn::PositionKind::sinusoidal, nn::PositionKind::learned}) {
      INFO("pre-LN " << (norm == nn::NormPlacement::pre) << " learned positions "
                     << (positions == nn::PositionKind::learned));
      const nn::ModelConfig c = small_config(norm, positions);
      nn::Transformer model_cpu(c, *cpu), model_gpu(c, *gpu);
      model_cpu.init_parameters(7);
      model_gpu.init_parameters(7);
      check_close(model_gpu.params().values().to_host_f32(), model_cpu.params().values().to_host_f32(), 0, 1e-7);

      const nn::Batch batch = padded_batch(c);
      const float grad_scale = 1.0f / float(batch.target_tokens());
      const nn::StepRng rng{11, 1, true};
      tensor::Arena arena_cpu(*cpu), arena_gpu(*gpu);
      model_cpu.params().zero_grad();
      model_gpu.params().zero_grad();
      nn::LossStats lc = model_cpu.forward_backward(batch, arena_cpu, rng, grad_scale);
      nn::LossStats lg = model_gpu.forward_backward(batch, arena_gpu, rng, grad_scale);
      CHECK(lg.tokens == lc.tokens);
      CHECK(lg.loss_sum == Approx(lc.loss_sum).epsilon(1e-4));
      CHECK(lg.nll_sum == Approx(lc.nll_sum).epsilon(1e-4));
      check_close_scaled(model_gpu.params().grads().to_host_f32(), model_cpu.params().grads().to_host_f32(), 1e-3);

      // The second step reuses the arena (no new device memory) and gives the same numbers again.
      arena_gpu.reset();
      model_gpu.params().zero_grad();
      nn::LossStats again = model_gpu.forward_backward(batch, arena_gpu, rng, grad_scale);
      CHECK(again.loss_sum == Approx(lg.loss_sum).epsilon(1e-6));
    }
  }
}

TEST_CASE("cuda transformer: Adam training follows the CPU's losses", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  const nn::ModelConfig c = small_config(nn::NormPlacement::post, nn::PositionKind::sinusoidal);
  nn::Transformer model_cpu(c, *cpu), model_gpu(c, *gpu);
  model_cpu.init_parameters(3);
  model_gpu.init_parameters(3);
  train::SyntheticOptions options;
  options.steps = 4;
  options.batch_size = 4;
  options.src_len = 9;
  options.tgt_len = 8;
  options.warmup_steps = 10;
  options.task = train::SyntheticTask::copy;
  train::SyntheticResult rc = train::train_synthetic(model_cpu, options, {});
  train::SyntheticResult rg = train::train_synthetic(model_gpu, options, {});
  REQUIRE(rg.losses.size() == rc.losses.size());
  for (size_t i = 0; i < rc.losses.size(); ++i) {
    INFO("step " << i + 1);
    CHECK(std::isfinite(rg.losses[i]));
    CHECK(rg.losses[i] == Approx(rc.losses[i]).epsilon(1e-3));
  }
}

TEST_CASE("cuda transformer: teacher-forced logits and incremental decoding match the CPU", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  const nn::ModelConfig c = small_config(nn::NormPlacement::pre, nn::PositionKind::sinusoidal);
  nn::Transformer model_cpu(c, *cpu), model_gpu(c, *gpu);
  model_cpu.init_parameters(9);
  model_gpu.init_parameters(9);
  const nn::Batch batch = padded_batch(c);

  tensor::Arena arena_cpu(*cpu), arena_gpu(*gpu);
  std::vector<float> logits_cpu = model_cpu.forward_logits(batch, arena_cpu).to_host_f32();
  std::vector<float> logits_gpu = model_gpu.forward_logits(batch, arena_gpu).to_host_f32();
  check_close_scaled(logits_gpu, logits_cpu, 1e-4);

  // Greedy-style decoding of two steps with a beam reorder in between, on both devices.
  tensor::Arena enc_cpu(*cpu), enc_gpu(*gpu), cache_cpu(*cpu), cache_gpu(*gpu), step_cpu(*cpu), step_gpu(*gpu);
  nn::EncoderOutput eo_cpu = model_cpu.encode(batch.src, batch.src_lengths, batch.B, batch.S, enc_cpu);
  nn::EncoderOutput eo_gpu = model_gpu.encode(batch.src, batch.src_lengths, batch.B, batch.S, enc_gpu);
  nn::DecodeState st_cpu = model_cpu.start_decoding(eo_cpu, 2 * batch.B, 5, cache_cpu);
  nn::DecodeState st_gpu = model_gpu.start_decoding(eo_gpu, 2 * batch.B, 5, cache_gpu);
  std::vector<int32_t> tokens(batch.B, c.bos_id);
  for (int step = 0; step < 3; ++step) {
    INFO("step " << step);
    std::vector<float> lp_cpu = model_cpu.decode_step(st_cpu, tokens, step_cpu, true).to_host_f32();
    std::vector<float> lp_gpu = model_gpu.decode_step(st_gpu, tokens, step_gpu, true).to_host_f32();
    check_close_scaled(lp_gpu, lp_cpu, 1e-4);
    step_cpu.reset();
    step_gpu.reset();
    if (step == 0) {  // duplicate every row (a beam of two), reversed order
      std::vector<int32_t> index;
      for (int r = batch.B - 1; r >= 0; --r) index.insert(index.end(), {r, r});
      model_cpu.reorder(st_cpu, index);
      model_gpu.reorder(st_gpu, index);
      tokens.assign(index.size(), 0);
    }
    for (size_t r = 0; r < tokens.size(); ++r) tokens[r] = int32_t(4 + (r * 7 + step) % 90);
  }
}
