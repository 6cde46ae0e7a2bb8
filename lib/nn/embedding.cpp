#include "nn/embedding.h"

#include <cmath>

#include "nn/positional.h"
#include "ops/elementwise.h"
#include "ops/embedding.h"
#include "ops/kept_bf16.h"

namespace tt::nn {

void Embeddings::declare(ParameterSet& params, const ModelConfig& c) {
  D_ = c.d_model;
  dropout_ = c.dropout;
  scale_ = c.scale_embeddings ? std::sqrt(static_cast<float>(c.d_model)) : 1.0f;
  layout_ = c.sinusoidal_layout;
  learned_ = c.positions == PositionKind::learned;
  if (c.shared_vocab) {
    src_index_ = tgt_index_ = params.declare("embeddings.shared.weight", tensor::Shape{c.vocab_size_src, c.d_model});
  } else {
    src_index_ = params.declare("embeddings.src.weight", tensor::Shape{c.vocab_size_src, c.d_model});
    tgt_index_ = params.declare("embeddings.tgt.weight", tensor::Shape{c.vocab_size_tgt, c.d_model});
  }
  if (learned_) positions_index_ = params.declare("embeddings.positions.weight", tensor::Shape{c.max_positions, c.d_model});
  max_positions_ = c.max_positions;
  if (c.output_bias) output_bias_index_ = params.declare("output.bias", tensor::Shape{c.vocab_size_tgt});
  has_output_bias_ = c.output_bias;
}

void Embeddings::bind(const ParameterSet& params, backend::Backend& backend) {
  src_ = params[src_index_].value;
  dsrc_ = params[src_index_].grad;
  tgt_ = params[tgt_index_].value;
  dtgt_ = params[tgt_index_].grad;
  if (learned_) {
    positions_ = params[positions_index_].value;
    dpositions_ = params[positions_index_].grad;
  } else {
    positions_ = tensor::Tensor::from_host(backend, tensor::Shape{max_positions_, D_},
                                           sinusoidal_table(max_positions_, D_, layout_));
  }
  if (has_output_bias_) {
    output_bias_ = params[output_bias_index_].value;
    doutput_bias_ = params[output_bias_index_].grad;
  }
}

void Embeddings::forward(const tensor::Tensor& y, const tensor::Tensor& ids, Side side, int position_offset,
                         const StepContext& ctx, Saved* saved) const {
  // Its copy from the dropout kernel when there is one.
  ops::KeptBf16 kept = saved ? ops::KeptBf16(y) : ops::KeptBf16();
  ops::embedding_forward(y, ids, table(side), positions_, scale_, position_offset);
  const float p = ctx.rate(dropout_);
  const backend::DropoutKey key = ctx.key(side == Side::source ? 1 : 2);
  if (p > 0) ops::dropout_forward(y, y, p, key);
  if (saved) *saved = Saved{ids, key, p, y, std::move(kept)};
}

void Embeddings::backward(const tensor::Tensor& dy, const Saved& saved, Side side) const {
  saved.output_kept.release();  // the first layer's backward, its reader, is done
  if (saved.p > 0) ops::dropout_backward(dy, dy, saved.p, saved.key);
  ops::embedding_backward(table_grad(side), dy, saved.ids, scale_);
  if (learned_) ops::positions_backward(dpositions_, dy);
}

}  // namespace tt::nn
