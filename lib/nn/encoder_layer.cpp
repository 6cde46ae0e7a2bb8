#include "nn/encoder_layer.h"

namespace tt::nn {

void EncoderLayer::declare(ParameterSet& params, const std::string& prefix, const ModelConfig& c, int layer) {
  placement_ = c.norm;
  dropout_ = c.dropout;
  site_ = kEncoderSites + 8u * static_cast<uint32_t>(layer);
  self_attn_.declare(params, prefix + ".self_attn", c.d_model, c.heads, MultiHeadAttention::Kind::self,
                     c.attention_dropout, site_ + 0);
  self_attn_norm_.declare(params, prefix + ".self_attn_norm", c.d_model, c.layer_norm_eps);
  ffn_.declare(params, prefix + ".ffn", c.d_model, c.d_ff, c.relu_dropout, c.activation, site_ + 2);
  ffn_norm_.declare(params, prefix + ".ffn_norm", c.d_model, c.layer_norm_eps);
}

void EncoderLayer::bind(const ParameterSet& params) {
  self_attn_.bind(params);
  self_attn_norm_.bind(params);
  ffn_.bind(params);
  ffn_norm_.bind(params);
}

void EncoderLayer::forward(const tensor::Tensor& y, const tensor::Tensor& x, const tensor::Tensor& src_lengths,
                           const StepContext& ctx, Saved* saved, const tensor::Tensor& capture) const {
  tensor::Tensor x1 = ctx.arena.allocate(x.shape());
  residual_block_forward(x1, x, self_attn_norm_, placement_, ctx.rate(dropout_), ctx.key(site_ + 1), ctx.arena,
                         saved ? &saved->attn_block : nullptr, self_attn_.output(),
                         [&](const tensor::Tensor& out, const tensor::Tensor& in, bool fused) {
                           self_attn_.forward(out, in, tensor::Tensor{}, src_lengths, false, ctx,
                                              saved ? &saved->attn : nullptr, capture, fused);
                         });
  residual_block_forward(y, x1, ffn_norm_, placement_, ctx.rate(dropout_), ctx.key(site_ + 3), ctx.arena,
                         saved ? &saved->ffn_block : nullptr, ffn_.output(),
                         [&](const tensor::Tensor& out, const tensor::Tensor& in, bool fused) {
                           ffn_.forward(out, in, ctx, saved ? &saved->ffn : nullptr, fused);
                         });
}

void EncoderLayer::backward(const tensor::Tensor& dx, const tensor::Tensor& dy, const Saved& s,
                            tensor::Arena& scratch) const {
  tensor::Tensor dx1 = scratch.allocate(dy.shape());
  residual_block_backward(dx1, dy, ffn_norm_, placement_, s.ffn_block, scratch, ffn_.output(),
                          [&](const tensor::Tensor& din, const tensor::Tensor& dout, bool fused) {
                            ffn_.backward(din, dout, s.ffn, scratch, fused);
                          });
  residual_block_backward(dx, dx1, self_attn_norm_, placement_, s.attn_block, scratch, self_attn_.output(),
                          [&](const tensor::Tensor& din, const tensor::Tensor& dout, bool fused) {
                            self_attn_.backward(din, tensor::Tensor{}, dout, s.attn, scratch, fused);
                          });
}

}  // namespace tt::nn
