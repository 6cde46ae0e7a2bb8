// The encoder stack: source embeddings, N encoder layers, and (pre-LN only) a final LayerNorm.
//   src ids [B, S] i32, src_lengths [B] i32 -> memory [B, S, D]
#pragma once

#include <vector>

#include "nn/embedding.h"
#include "nn/encoder_layer.h"
#include "ops/kept_bf16.h"

namespace tt::nn {

class Encoder {
 public:
  struct Saved {
    Embeddings::Saved embedding;
    std::vector<EncoderLayer::Saved> layers;
    LayerNorm::Saved final_norm;
    tensor::Tensor output;     // pre-LN: the final norm's output
    ops::KeptBf16 output_kept;  // kept in bf16 training, for the next products, until backward
  };

  void declare(ParameterSet& params, const ModelConfig& config);
  void bind(const ParameterSet& params);

  // captures: per layer [B, H, S, S] (null or shorter vector: none for the rest).
  tensor::Tensor forward(const tensor::Tensor& src, const tensor::Tensor& src_lengths, const Embeddings& embeddings,
                         const StepContext& ctx, Saved* saved,
                         const std::vector<tensor::Tensor>* captures = nullptr) const;
  // dmemory clobbered. Gradient buffers from `arena`; per-layer temporaries from `scratch` (reset per layer).
  void backward(const tensor::Tensor& dmemory, const Saved& saved, const Embeddings& embeddings, tensor::Arena& arena,
                tensor::Arena& scratch) const;

 private:
  bool pre_norm_ = false;
  std::vector<EncoderLayer> layers_;
  LayerNorm final_norm_;
};

}  // namespace tt::nn
