#include "nn/decoder.h"

#include <string>

#include "ops/kept_bf16.h"
#include "ops/view.h"

namespace tt::nn {

using tensor::Tensor;

namespace {
Tensor pick(const std::vector<Tensor>* v, size_t l) { return v && l < v->size() ? (*v)[l] : Tensor{}; }
}  // namespace

void Decoder::declare(ParameterSet& params, const ModelConfig& c) {
  pre_norm_ = c.norm == NormPlacement::pre;
  layers_.resize(static_cast<size_t>(c.n_layers_dec));
  for (int l = 0; l < c.n_layers_dec; ++l)
    layers_[static_cast<size_t>(l)].declare(params, "decoder.layers." + std::to_string(l), c, l);
  if (pre_norm_) final_norm_.declare(params, "decoder.final_norm", c.d_model, c.layer_norm_eps);
}

void Decoder::bind(const ParameterSet& params) {
  for (auto& layer : layers_) layer.bind(params);
  if (pre_norm_) final_norm_.bind(params);
}

Tensor Decoder::forward(const Tensor& tgt_in, const Tensor& tgt_lengths, const Tensor& memory,
                        const Tensor& src_lengths, const Embeddings& embeddings, const StepContext& ctx, Saved* saved,
                        DecoderCaptures captures) const {
  const int64_t B = tgt_in.dim(0), T = tgt_in.dim(1), D = memory.dim(2);
  if (saved) saved->layers.resize(layers_.size());
  Tensor x = ctx.arena.allocate(tensor::Shape{B, T, D});
  embeddings.forward(x, tgt_in, Side::target, 0, ctx, saved ? &saved->embedding : nullptr);
  const bool scratch = !saved && ctx.layer_scratch;  // inference: one layer's temporaries at a time
  for (size_t l = 0; l < layers_.size(); ++l) {
    Tensor y = ctx.arena.allocate(x.shape());
    if (scratch) {
      tensor::ArenaScope scope(*ctx.layer_scratch);
      const StepContext layer_ctx{*ctx.layer_scratch, ctx.dropout, ctx.seed, ctx.step, ctx.batch};
      layers_[l].forward(y, x, tgt_lengths, memory, src_lengths, layer_ctx, nullptr, pick(captures.self, l),
                         pick(captures.cross, l));
    } else {
      layers_[l].forward(y, x, tgt_lengths, memory, src_lengths, ctx, saved ? &saved->layers[l] : nullptr,
                         pick(captures.self, l), pick(captures.cross, l));
    }
    x = y;
  }
  if (pre_norm_) {
    Tensor y = ctx.arena.allocate(x.shape());
    if (saved) {  // the output projection reads it: its copy comes from the norm's kernel
      saved->output = y;
      saved->output_kept = ops::KeptBf16(y);
    }
    final_norm_.forward(y, x, ctx.arena, saved ? &saved->final_norm : nullptr);
    x = y;
  }
  return x;
}

void Decoder::backward(const Tensor& dhidden, const Tensor& dmemory, const Saved& saved, const Embeddings& embeddings,
                       tensor::Arena& arena, tensor::Arena& scratch) const {
  Tensor dy = dhidden;
  saved.output_kept.release();
  if (pre_norm_) final_norm_.backward(dy, dy, saved.final_norm);
  Tensor spare = arena.allocate(dhidden.shape());
  for (size_t l = layers_.size(); l-- > 0;) {
    tensor::ArenaScope scope(scratch);
    layers_[l].backward(spare, dmemory, dy, saved.layers[l], scratch);
    std::swap(spare, dy);
  }
  embeddings.backward(dy, saved.embedding, Side::target);
}

void Decoder::start(const std::vector<DecoderLayer::Cache>& caches, const Tensor& memory) const {
  for (size_t l = 0; l < layers_.size(); ++l) layers_[l].start(caches[l], memory);
}

Tensor Decoder::forward_step(const Tensor& tokens, const std::vector<DecoderLayer::Cache>& caches,
                             const StepKeys& keys, const Embeddings& embeddings, tensor::Arena& arena,
                             DecoderCaptures captures) const {
  const int t = keys.first_position, n = keys.positions;
  const int64_t queries = tokens.dim(0), rows = queries / n, D = embeddings.table(Side::target).dim(1);
  const StepContext ctx{arena, false, 0, 0};
  Tensor x = arena.allocate(tensor::Shape{queries, 1, D});
  for (int i = 0; i < n; ++i)  // one time slice (one position for every row) at a time
    embeddings.forward(ops::view(x, i * rows * D, tensor::Shape{rows, 1, D}),
                       ops::view(tokens, i * rows, tensor::Shape{rows, 1}), Side::target, t + i, ctx, nullptr);
  for (size_t l = 0; l < layers_.size(); ++l) {
    Tensor y = arena.allocate(x.shape());
    layers_[l].forward_step(y, x, caches[l], keys, arena, pick(captures.self, l), pick(captures.cross, l));
    x = y;
  }
  if (pre_norm_) {
    Tensor y = arena.allocate(x.shape());
    final_norm_.forward(y, x, arena, nullptr);
    x = y;
  }
  return x;
}

}  // namespace tt::nn
