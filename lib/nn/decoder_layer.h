// One decoder layer (§3.1): causal self-attention, cross-attention over the encoder output, then the
// feed-forward network, each in a residual block with dropout and LayerNorm (post-LN or pre-LN).
//   x, y [B, T, D]; memory [B, S, D]; tgt_lengths, src_lengths [B] i32.
// Names: <prefix>.self_attn.*, self_attn_norm.*, cross_attn.*, cross_attn_norm.*, ffn.*, ffn_norm.*
// Dropout places (site = kDecoderSites + 8 l + place): 0 self weights, 1 self output, 2 cross weights,
// 3 cross output, 4 FFN hidden, 5 FFN output.
#pragma once

#include <string>

#include "nn/attention.h"
#include "nn/config.h"
#include "nn/decode_state.h"
#include "nn/feed_forward.h"
#include "nn/layer_norm.h"
#include "nn/residual.h"

namespace tt::nn {

class DecoderLayer {
 public:
  struct Saved {
    MultiHeadAttention::Saved self_attn, cross_attn;
    FeedForward::Saved ffn;
    ResidualSaved self_block, cross_block, ffn_block;
  };
  // Incremental decoding caches of this layer (see DecodeState).
  using Cache = LayerCache;

  void declare(ParameterSet& params, const std::string& prefix, const ModelConfig& config, int layer);
  void bind(const ParameterSet& params);

  // y must not alias x. capture_self [B, H, T, T], capture_cross [B, H, T, S] (undefined: none).
  void forward(const tensor::Tensor& y, const tensor::Tensor& x, const tensor::Tensor& tgt_lengths,
               const tensor::Tensor& memory, const tensor::Tensor& src_lengths, const StepContext& ctx, Saved* saved,
               const tensor::Tensor& capture_self = {}, const tensor::Tensor& capture_cross = {}) const;
  // dx assigned (must not alias dy), dmemory ACCUMULATED; dy clobbered.
  void backward(const tensor::Tensor& dx, const tensor::Tensor& dmemory, const tensor::Tensor& dy, const Saved& saved,
                tensor::Arena& scratch) const;

  // Inference: fills cache.cross_k/v rows [0, B) from memory [B, S, D].
  void start(const Cache& cache, const tensor::Tensor& memory) const;
  // New positions of each row, time-major: x, y [n * rows, 1, D]; keys says where each query's keys are
  // and where its own go.
  void forward_step(const tensor::Tensor& y, const tensor::Tensor& x, const Cache& cache, const StepKeys& keys,
                    tensor::Arena& arena, const tensor::Tensor& capture_self = {},
                    const tensor::Tensor& capture_cross = {}) const;

 private:
  NormPlacement placement_ = NormPlacement::post;
  float dropout_ = 0;
  uint32_t site_ = 0;
  MultiHeadAttention self_attn_, cross_attn_;
  LayerNorm self_attn_norm_, cross_attn_norm_;
  FeedForward ffn_;
  LayerNorm ffn_norm_;
};

}  // namespace tt::nn
