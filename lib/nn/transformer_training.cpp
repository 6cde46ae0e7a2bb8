// nn::Transformer's training side: forward + explicit backward on a batch, and the teacher-forced
// evaluation passes (loss without dropout, logits with optional attention capture).
#include "nn/loss.h"
#include "nn/transformer.h"
#include "nn/transformer_impl.h"
#include "ops/kept_bf16.h"

namespace tt::nn {

LossStats Transformer::forward_backward(const Batch& batch, tensor::Arena& arena, const StepRng& rng,
                                        float grad_scale) {
  Impl& m = *impl_;
  if (usage_ != Usage::training)
    throw InternalError("forward_backward on a model built for inference (no gradient buffers)");
  // The step's saved activations: handles into `arena`, dropped when the step returns.
  Encoder::Saved encoder_saved;
  Decoder::Saved decoder_saved;
  // m.scratch serves backward's temporaries; in forward it is free for each layer's own.
  const StepContext ctx{arena, rng.dropout, rng.seed, rng.step, rng.batch, nullptr, &m.scratch};
  const detail::DeviceBatch d = detail::upload(batch, m.embeddings, arena, true);
  const int64_t N = int64_t{batch.B} * batch.T, D = config_.d_model;

  Tensor memory = m.encoder.forward(d.src, d.src_lengths, m.embeddings, ctx, &encoder_saved);
  Tensor hidden = m.decoder.forward(d.tgt_in, d.tgt_lengths, memory, d.src_lengths, m.embeddings, ctx,
                                    &decoder_saved);
  const Tensor& table = m.embeddings.table(Side::target);
  Tensor logits = arena.allocate(Shape{N, table.dim(0)});
  ops::KeptBf16 hidden_kept(hidden);  // read again by backward's dtable product
  output_projection_forward(logits, hidden, table, m.embeddings.output_bias());
  // bf16: the loss kernel writes its gradient's copy as it goes, and both backward products read it.
  ops::KeptBf16 logits_kept(logits);
  LossStats stats = label_smoothed_loss(logits, d.tgt_out, batch.tgt_out, config_.label_smoothing, config_.pad_id,
                                        grad_scale, arena);

  Tensor dhidden = arena.allocate(Shape{batch.B, batch.T, D});
  output_projection_backward(dhidden, m.embeddings.table_grad(Side::target), m.embeddings.output_bias_grad(), logits,
                             hidden, table);
  hidden_kept.release();
  logits_kept.release();
  Tensor dmemory = arena.allocate(memory.shape());
  dmemory.zero();
  m.decoder.backward(dhidden, dmemory, decoder_saved, m.embeddings, arena, m.scratch);
  m.encoder.backward(dmemory, encoder_saved, m.embeddings, arena, m.scratch);
  return stats;
}

// The teacher-forced forward pass without dropout and without saving anything: logits [B, T, V].
static Tensor inference_logits(Transformer::Impl& m, const detail::DeviceBatch& d, const Batch& batch, tensor::Arena& arena,
                               AttentionCapture* capture) {
  const StepContext ctx{arena, false, 0, 0, 0, &m.scratch};
  Tensor memory = m.encoder.forward(d.src, d.src_lengths, m.embeddings, ctx, nullptr,
                                    capture ? &capture->encoder : nullptr);
  Tensor hidden = m.decoder.forward(
      d.tgt_in, d.tgt_lengths, memory, d.src_lengths, m.embeddings, ctx, nullptr,
      capture ? DecoderCaptures{&capture->decoder_self, &capture->decoder_cross} : DecoderCaptures{});
  const Tensor& table = m.embeddings.table(Side::target);
  Tensor logits = arena.allocate(Shape{batch.B, batch.T, table.dim(0)});
  output_projection_forward(logits.reshape(Shape{int64_t{batch.B} * batch.T, table.dim(0)}), hidden, table,
                            m.embeddings.output_bias());
  return logits;
}

LossStats Transformer::evaluate(const Batch& batch, tensor::Arena& arena) {
  const detail::DeviceBatch d = detail::upload(batch, impl_->embeddings, arena, true);
  Tensor logits = inference_logits(*impl_, d, batch, arena, nullptr);
  return label_smoothed_loss(logits.reshape(Shape{logits.numel() / logits.dim(2), logits.dim(2)}), d.tgt_out,
                             batch.tgt_out, config_.label_smoothing, config_.pad_id, 0.0f, arena);
}

Tensor Transformer::forward_logits(const Batch& batch, tensor::Arena& arena, AttentionCapture* capture) {
  const detail::DeviceBatch d = detail::upload(batch, impl_->embeddings, arena, false);
  return inference_logits(*impl_, d, batch, arena, capture);
}

}  // namespace tt::nn
