// The training memory estimate: the state and activation terms by hand for a small config, and a refusal
// that carries the estimate. (Against measurement: the estimate is 2-16 % above the peak RSS of synthetic
// runs of tiny, small and base, so it errs on the side of refusing only what cannot fit.)
#include "train/memory_estimate.h"

#include <catch2/catch.hpp>

#include "util/error.h"

namespace {

tt::nn::ModelConfig small_config() {
  tt::nn::ModelConfig c = tt::nn::preset("tiny");  // 4+4 layers, d_model 128, d_ff 256, 4 heads
  c.vocab_size_src = c.vocab_size_tgt = 1000;
  c.attention_dropout = 0;
  return c;
}

}  // namespace

TEST_CASE("training memory: 16 bytes a parameter plus the activations one batch saves", "[memory]") {
  const tt::nn::ModelConfig c = small_config();
  const auto m = tt::train::estimate_training_memory(c, {2048, 64, false});
  CHECK(m.parameters == c.parameter_count());
  CHECK(m.state_bytes == 16 * c.parameter_count());
  // Floats per token: encoder layer 10 D + F + H L, decoder layer 17 D + F + 2 H L, logits 2 V, 2 D.
  const int64_t D = 128, F = 256, H = 4, L = 64, V = 1000;
  const int64_t per_token = 4 * (10 * D + F + H * L) + 4 * (17 * D + F + 2 * H * L) + 2 * V + 2 * D;
  CHECK(m.activation_bytes == 4 * 2048 * per_token);
  CHECK(m.total() == m.state_bytes + m.activation_bytes);
  // bf16 keeps a 2-byte copy of the weights, and of the operands products read in forward and backward
  // (per token: encoder layer 6 D + F + H L, decoder layer 11 D + F + 2 H L, D, and the loss gradient's
  // V), and no fp32 FFN hidden layer, Q|K|V or attention context (encoder layer 4 D + F, decoder layer
  // 8 D + F); attention dropout a second copy of the probabilities.
  const auto bf16 = tt::train::estimate_training_memory(c, {2048, 64, true});
  CHECK(bf16.state_bytes == 18 * c.parameter_count());
  CHECK(bf16.activation_bytes ==
        m.activation_bytes + 2 * 2048 * (4 * (6 * D + F + H * L) + 4 * (11 * D + F + 2 * H * L) + D + V) -
            4 * 2048 * (4 * (4 * D + F) + 4 * (8 * D + F)));
  tt::nn::ModelConfig dropped = c;
  dropped.attention_dropout = 0.1f;
  CHECK(tt::train::estimate_training_memory(dropped, {2048, 64, false}).activation_bytes ==
        m.activation_bytes + 4 * 2048 * (4 * H * L + 4 * 2 * H * L));
  // In bf16 the weights after dropout are kept as their copy alone, the copy the probabilities had.
  CHECK(tt::train::estimate_training_memory(dropped, {2048, 64, true}).activation_bytes == bf16.activation_bytes);
  // Keys per query never exceed the batch.
  CHECK(tt::train::estimate_training_memory(c, {32, 64, false}).activation_bytes ==
        tt::train::estimate_training_memory(c, {32, 32, false}).activation_bytes);
}

TEST_CASE("training memory: a run that cannot fit is refused with the estimate", "[memory]") {
  tt::nn::ModelConfig big = tt::nn::preset("big");
  big.vocab_size_src = big.vocab_size_tgt = 32000;
  const tt::train::BatchShape batch{10'000'000, 257, false};
  const auto m = tt::train::estimate_training_memory(big, batch);
  CHECK(m.total() > int64_t{1} << 40);  // terabytes
  CHECK_NOTHROW(tt::train::check_training_fits(big, batch, 0));  // unknown memory: no check
  CHECK_NOTHROW(tt::train::check_training_fits(big, batch, m.total()));
  try {
    tt::train::check_training_fits(big, batch, int64_t{16} << 30);
    FAIL("not refused");
  } catch (const tt::ConfigError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::StartsWith("the model does not fit in memory: training needs about " +
                                       tt::nn::format_bytes(m.total())) &&
                         Catch::Contains(tt::nn::format_bytes(m.state_bytes) + " of weights, gradients and Adam state") &&
                         Catch::Contains("for a batch of 10000000 tokens") && Catch::Contains("17.2 GB of memory here"));
    CHECK_THAT(e.hint(), Catch::StartsWith("lower batch_tokens (reach large batches with accum)"));
  }
  tt::train::BatchShape synthetic = batch;
  synthetic.size_option = "batch_size";
  CHECK_THROWS_WITH(tt::train::check_training_fits(big, synthetic, 1 << 30), Catch::Contains("tokens"));
  try {
    tt::train::check_training_fits(big, synthetic, 1 << 30);
  } catch (const tt::ConfigError& e) {
    CHECK_THAT(e.hint(), Catch::StartsWith("lower batch_size or make the model smaller"));
  }
}
