// One encoder layer (§3.1): self-attention, then the feed-forward network, each wrapped in a residual
// connection with dropout and LayerNorm (post-LN or pre-LN per config.norm).
//   x, y [B, S, D]; src_lengths [B] i32 (key padding).
// Names: <prefix>.self_attn.*, <prefix>.self_attn_norm.*, <prefix>.ffn.*, <prefix>.ffn_norm.*
// Dropout places (site = kEncoderSites + 8 l + place): 0 attention weights, 1 attention output, 2 FFN hidden,
// 3 FFN output.
#pragma once

#include <string>

#include "nn/attention.h"
#include "nn/config.h"
#include "nn/feed_forward.h"
#include "nn/layer_norm.h"
#include "nn/residual.h"

namespace tt::nn {

class EncoderLayer {
 public:
  struct Saved {
    MultiHeadAttention::Saved attn;
    FeedForward::Saved ffn;
    ResidualSaved attn_block, ffn_block;
  };

  void declare(ParameterSet& params, const std::string& prefix, const ModelConfig& config, int layer);
  void bind(const ParameterSet& params);

  // y must not alias x. capture [B, H, S, S] or undefined.
  void forward(const tensor::Tensor& y, const tensor::Tensor& x, const tensor::Tensor& src_lengths,
               const StepContext& ctx, Saved* saved, const tensor::Tensor& capture = {}) const;
  // dx assigned (must not alias dy); dy clobbered.
  void backward(const tensor::Tensor& dx, const tensor::Tensor& dy, const Saved& saved, tensor::Arena& scratch) const;

 private:
  NormPlacement placement_ = NormPlacement::post;
  float dropout_ = 0;
  uint32_t site_ = 0;
  MultiHeadAttention self_attn_;
  LayerNorm self_attn_norm_;
  FeedForward ffn_;
  LayerNorm ffn_norm_;
};

}  // namespace tt::nn
