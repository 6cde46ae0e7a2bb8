// Shared by the encoder- and decoder-layer gradient tests: a tiny layer config and a grad-check reporter.
#pragma once

#include <catch2/catch.hpp>

#include "nn/config.h"
#include "support/grad_check.h"

namespace tt::test {

// d_model 8, 2 heads, d_ff 12; dropout on (0.2 residual, 0.1 attention and ReLU) or off.
inline nn::ModelConfig layer_config(nn::NormPlacement norm, bool dropout) {
  nn::ModelConfig c;
  c.vocab_size_src = c.vocab_size_tgt = 10;
  c.d_model = 8;
  c.heads = 2;
  c.d_ff = 12;
  c.norm = norm;
  c.dropout = dropout ? 0.2f : 0.0f;
  c.attention_dropout = dropout ? 0.1f : 0.0f;
  c.relu_dropout = dropout ? 0.1f : 0.0f;
  return c;
}

inline void report(const GradCheck& r) {
  INFO(r.report);
  CHECK(r.ok());
}

}  // namespace tt::test
