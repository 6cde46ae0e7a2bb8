// The decoder stack: target embeddings, N decoder layers, and (pre-LN only) a final LayerNorm.
//   tgt_in ids [B, T] i32, tgt_lengths [B], memory [B, S, D], src_lengths [B] -> hidden [B, T, D]
// (the tied output projection and the loss are in nn/loss.h).
#pragma once

#include <vector>

#include "nn/decoder_layer.h"
#include "nn/embedding.h"
#include "ops/kept_bf16.h"

namespace tt::nn {

// Where the decoder's attention weights go (nn::AttentionCapture's decoder half): per layer, self
// [B, H, T, T] and cross [B, H, T, S] (null or shorter vectors: none for the rest).
struct DecoderCaptures {
  const std::vector<tensor::Tensor>* self = nullptr;
  const std::vector<tensor::Tensor>* cross = nullptr;
};

class Decoder {
 public:
  struct Saved {
    Embeddings::Saved embedding;
    std::vector<DecoderLayer::Saved> layers;
    LayerNorm::Saved final_norm;
    tensor::Tensor output;     // pre-LN: the final norm's output
    ops::KeptBf16 output_kept;  // kept in bf16 training, for the next products, until backward
  };

  void declare(ParameterSet& params, const ModelConfig& config);
  void bind(const ParameterSet& params);
  int layers() const { return static_cast<int>(layers_.size()); }

  tensor::Tensor forward(const tensor::Tensor& tgt_in, const tensor::Tensor& tgt_lengths, const tensor::Tensor& memory,
                         const tensor::Tensor& src_lengths, const Embeddings& embeddings, const StepContext& ctx,
                         Saved* saved, DecoderCaptures captures = {}) const;
  // dhidden clobbered; dmemory ACCUMULATED (zero it first).
  void backward(const tensor::Tensor& dhidden, const tensor::Tensor& dmemory, const Saved& saved,
                const Embeddings& embeddings, tensor::Arena& arena, tensor::Arena& scratch) const;

  // Inference.
  void start(const std::vector<DecoderLayer::Cache>& caches, const tensor::Tensor& memory) const;
  // tokens [n * rows, 1] i32 at positions keys.first_position .. + n - 1 (n = keys.positions), time-major
  // -> hidden [n * rows, 1, D].
  tensor::Tensor forward_step(const tensor::Tensor& tokens, const std::vector<DecoderLayer::Cache>& caches,
                              const StepKeys& keys, const Embeddings& embeddings, tensor::Arena& arena,
                              DecoderCaptures captures = {}) const;

 private:
  bool pre_norm_ = false;
  std::vector<DecoderLayer> layers_;
  LayerNorm final_norm_;
};

}  // namespace tt::nn
