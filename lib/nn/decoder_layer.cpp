#include "nn/decoder_layer.h"

#include "ops/view.h"

namespace tt::nn {

using tensor::Tensor;

void DecoderLayer::declare(ParameterSet& params, const std::string& prefix, const ModelConfig& c, int layer) {
  placement_ = c.norm;
  dropout_ = c.dropout;
  site_ = kDecoderSites + 8u * static_cast<uint32_t>(layer);
  self_attn_.declare(params, prefix + ".self_attn", c.d_model, c.heads, MultiHeadAttention::Kind::self,
                     c.attention_dropout, site_ + 0);
  self_attn_norm_.declare(params, prefix + ".self_attn_norm", c.d_model, c.layer_norm_eps);
  cross_attn_.declare(params, prefix + ".cross_attn", c.d_model, c.heads, MultiHeadAttention::Kind::cross,
                      c.attention_dropout, site_ + 2);
  cross_attn_norm_.declare(params, prefix + ".cross_attn_norm", c.d_model, c.layer_norm_eps);
  ffn_.declare(params, prefix + ".ffn", c.d_model, c.d_ff, c.relu_dropout, c.activation, site_ + 4);
  ffn_norm_.declare(params, prefix + ".ffn_norm", c.d_model, c.layer_norm_eps);
}

void DecoderLayer::bind(const ParameterSet& params) {
  self_attn_.bind(params);
  self_attn_norm_.bind(params);
  cross_attn_.bind(params);
  cross_attn_norm_.bind(params);
  ffn_.bind(params);
  ffn_norm_.bind(params);
}

void DecoderLayer::forward(const Tensor& y, const Tensor& x, const Tensor& tgt_lengths, const Tensor& memory,
                           const Tensor& src_lengths, const StepContext& ctx, Saved* saved, const Tensor& capture_self,
                           const Tensor& capture_cross) const {
  Tensor x1 = ctx.arena.allocate(x.shape());
  residual_block_forward(x1, x, self_attn_norm_, placement_, ctx.rate(dropout_), ctx.key(site_ + 1), ctx.arena,
                         saved ? &saved->self_block : nullptr, self_attn_.output(),
                         [&](const Tensor& out, const Tensor& in, bool fused) {
                           self_attn_.forward(out, in, Tensor{}, tgt_lengths, true, ctx,
                                              saved ? &saved->self_attn : nullptr, capture_self, fused);
                         });
  Tensor x2 = ctx.arena.allocate(x.shape());
  residual_block_forward(x2, x1, cross_attn_norm_, placement_, ctx.rate(dropout_), ctx.key(site_ + 3), ctx.arena,
                         saved ? &saved->cross_block : nullptr, cross_attn_.output(),
                         [&](const Tensor& out, const Tensor& in, bool fused) {
                           cross_attn_.forward(out, in, memory, src_lengths, false, ctx,
                                               saved ? &saved->cross_attn : nullptr, capture_cross, fused);
                         });
  residual_block_forward(y, x2, ffn_norm_, placement_, ctx.rate(dropout_), ctx.key(site_ + 5), ctx.arena,
                         saved ? &saved->ffn_block : nullptr, ffn_.output(),
                         [&](const Tensor& out, const Tensor& in, bool fused) {
                           ffn_.forward(out, in, ctx, saved ? &saved->ffn : nullptr, fused);
                         });
}

void DecoderLayer::backward(const Tensor& dx, const Tensor& dmemory, const Tensor& dy, const Saved& s,
                            tensor::Arena& scratch) const {
  Tensor dx2 = scratch.allocate(dy.shape());
  residual_block_backward(dx2, dy, ffn_norm_, placement_, s.ffn_block, scratch, ffn_.output(),
                          [&](const Tensor& din, const Tensor& dout, bool fused) {
                            ffn_.backward(din, dout, s.ffn, scratch, fused);
                          });
  Tensor dx1 = scratch.allocate(dy.shape());
  residual_block_backward(dx1, dx2, cross_attn_norm_, placement_, s.cross_block, scratch, cross_attn_.output(),
                          [&](const Tensor& din, const Tensor& dout, bool fused) {
                            cross_attn_.backward(din, dmemory, dout, s.cross_attn, scratch, fused);
                          });
  residual_block_backward(dx, dx1, self_attn_norm_, placement_, s.self_block, scratch, self_attn_.output(),
                          [&](const Tensor& din, const Tensor& dout, bool fused) {
                            self_attn_.backward(din, Tensor{}, dout, s.self_attn, scratch, fused);
                          });
}

void DecoderLayer::start(const Cache& cache, const Tensor& memory) const {
  const int64_t B = memory.dim(0), S = memory.dim(1), D = memory.dim(2);
  cross_attn_.project_memory(ops::view(cache.cross_k, 0, tensor::Shape{B, S, D}),
                             ops::view(cache.cross_v, 0, tensor::Shape{B, S, D}), memory);
}

void DecoderLayer::forward_step(const Tensor& y, const Tensor& x, const Cache& cache, const StepKeys& keys,
                                tensor::Arena& arena, const Tensor& capture_self, const Tensor& capture_cross) const {
  const StepContext ctx{arena, false, 0, 0};
  Tensor x1 = arena.allocate(x.shape());
  residual_forward(x1, x, self_attn_norm_, placement_, 0.0f, {}, arena, nullptr,
                   [&](const Tensor& out, const Tensor& in) {
                     self_attn_.forward_step(out, in, cache, keys, arena, capture_self);
                   });
  Tensor x2 = arena.allocate(x.shape());
  residual_forward(x2, x1, cross_attn_norm_, placement_, 0.0f, {}, arena, nullptr,
                   [&](const Tensor& out, const Tensor& in) {
                     cross_attn_.forward_cross_step(out, in, cache, keys, arena, capture_cross);
                   });
  residual_forward(y, x2, ffn_norm_, placement_, 0.0f, {}, arena, nullptr, [&](const Tensor& out, const Tensor& in) {
    ffn_.forward(out, in, ctx, nullptr);
  });
}

}  // namespace tt::nn
