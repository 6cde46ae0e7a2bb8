// Token embeddings scaled by √d_model (unless scale_embeddings is off) plus positions (§3.4, §3.5), then
// dropout (§5.4). The output projection reads the target table (tied) and, where the model has one, the
// logits bias output.bias [Vt] held here beside it.
//   ids [B, T] i32; y [B, T, D]. Tables: shared [V, D], or src [Vs, D] and tgt [Vt, D]; the output projection
//   uses the target table (tied). Positions: sinusoidal (a constant table, not a parameter) or learned
//   (embeddings.positions.weight [max_positions, D], shared by source and target).
// Dropout sites: 1 (source), 2 (target).
#pragma once

#include "nn/config.h"
#include "nn/params.h"
#include "nn/step_context.h"
#include "ops/kept_bf16.h"

namespace tt::nn {

enum class Side { source, target };

class Embeddings {
 public:
  struct Saved {
    tensor::Tensor ids;
    backend::DropoutKey key;
    float p = 0;
    tensor::Tensor output;
    ops::KeptBf16 output_kept;  // bf16 training: the output, for the first layer's products, until backward
  };

  void declare(ParameterSet& params, const ModelConfig& config);
  // After ParameterSet::allocate; uploads the sinusoidal table to `backend` once.
  void bind(const ParameterSet& params, backend::Backend& backend);

  const tensor::Tensor& table(Side side) const { return side == Side::source ? src_ : tgt_; }
  const tensor::Tensor& table_grad(Side side) const { return side == Side::source ? dsrc_ : dtgt_; }
  int vocab_size(Side side) const { return static_cast<int>(table(side).dim(0)); }
  // Undefined (no storage) when the model has no logits bias.
  const tensor::Tensor& output_bias() const { return output_bias_; }
  const tensor::Tensor& output_bias_grad() const { return doutput_bias_; }

  // position_offset: position of ids' first column (incremental decoding).
  void forward(const tensor::Tensor& y, const tensor::Tensor& ids, Side side, int position_offset,
               const StepContext& ctx, Saved* saved) const;
  // Accumulates the table (and learned position) gradients; dy is clobbered.
  void backward(const tensor::Tensor& dy, const Saved& saved, Side side) const;

 private:
  int D_ = 0, max_positions_ = 0;
  float dropout_ = 0, scale_ = 1;
  bool learned_ = false, has_output_bias_ = false;
  SinusoidalLayout layout_ = SinusoidalLayout::interleaved;
  size_t src_index_ = 0, tgt_index_ = 0, positions_index_ = 0, output_bias_index_ = 0;
  tensor::Tensor src_, tgt_, dsrc_, dtgt_, positions_, dpositions_, output_bias_, doutput_bias_;
};

}  // namespace tt::nn
