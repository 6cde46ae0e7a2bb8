#include "nn/encoder.h"

#include <string>

#include "ops/kept_bf16.h"

namespace tt::nn {

using tensor::Tensor;

void Encoder::declare(ParameterSet& params, const ModelConfig& c) {
  pre_norm_ = c.norm == NormPlacement::pre;
  layers_.resize(static_cast<size_t>(c.n_layers_enc));
  for (int l = 0; l < c.n_layers_enc; ++l)
    layers_[static_cast<size_t>(l)].declare(params, "encoder.layers." + std::to_string(l), c, l);
  if (pre_norm_) final_norm_.declare(params, "encoder.final_norm", c.d_model, c.layer_norm_eps);
}

void Encoder::bind(const ParameterSet& params) {
  for (auto& layer : layers_) layer.bind(params);
  if (pre_norm_) final_norm_.bind(params);
}

Tensor Encoder::forward(const Tensor& src, const Tensor& src_lengths, const Embeddings& embeddings,
                        const StepContext& ctx, Saved* saved, const std::vector<Tensor>* captures) const {
  const int64_t B = src.dim(0), S = src.dim(1), D = embeddings.table(Side::source).dim(1);
  if (saved) saved->layers.resize(layers_.size());
  Tensor x = ctx.arena.allocate(tensor::Shape{B, S, D});
  embeddings.forward(x, src, Side::source, 0, ctx, saved ? &saved->embedding : nullptr);
  const bool scratch = !saved && ctx.layer_scratch;
  // Inference keeps two layer outputs, not one per layer: each layer reads the last one and writes the other.
  Tensor spare = saved ? Tensor{} : ctx.arena.allocate(x.shape());
  auto next_output = [&] {
    if (saved) return ctx.arena.allocate(x.shape());
    Tensor y = spare;
    spare = x;
    return y;
  };
  for (size_t l = 0; l < layers_.size(); ++l) {
    Tensor y = next_output();
    Tensor capture = captures && l < captures->size() ? (*captures)[l] : Tensor{};
    if (scratch) {
      tensor::ArenaScope scope(*ctx.layer_scratch);
      const StepContext layer_ctx{*ctx.layer_scratch, ctx.dropout, ctx.seed, ctx.step, ctx.batch};
      layers_[l].forward(y, x, src_lengths, layer_ctx, nullptr, capture);
    } else {
      layers_[l].forward(y, x, src_lengths, ctx, saved ? &saved->layers[l] : nullptr, capture);
    }
    x = y;
  }
  if (pre_norm_) {
    Tensor y = next_output();
    if (saved) {  // the decoder's cross-attention reads it: its copy comes from the norm's kernel
      saved->output = y;
      saved->output_kept = ops::KeptBf16(y);
    }
    final_norm_.forward(y, x, ctx.arena, saved ? &saved->final_norm : nullptr);
    x = y;
  }
  return x;
}

void Encoder::backward(const Tensor& dmemory, const Saved& saved, const Embeddings& embeddings, tensor::Arena& arena,
                       tensor::Arena& scratch) const {
  Tensor dy = dmemory;
  saved.output_kept.release();
  if (pre_norm_) final_norm_.backward(dy, dy, saved.final_norm);
  Tensor spare = arena.allocate(dmemory.shape());
  for (size_t l = layers_.size(); l-- > 0;) {
    tensor::ArenaScope scope(scratch);
    layers_[l].backward(spare, dy, saved.layers[l], scratch);
    std::swap(spare, dy);
  }
  embeddings.backward(dy, saved.embedding, Side::source);
}

}  // namespace tt::nn
