// nn::Transformer's inference side: encode once, then decode one target position at a time with the
// KV caches of a DecodeState; reorder() keeps, duplicates or drops hypotheses (beam search).
#include <algorithm>

#include "nn/loss.h"
#include "nn/transformer.h"
#include "nn/transformer_impl.h"
#include "ops/cross_entropy.h"
#include "ops/softmax.h"
#include "ops/view.h"

namespace tt::nn {

EncoderOutput Transformer::encode(const std::vector<int32_t>& src, const std::vector<int32_t>& src_lengths, int B,
                                  int S, tensor::Arena& arena, AttentionCapture* capture) {
  Impl& m = *impl_;
  if (B <= 0 || S <= 0) throw Error("encode: empty batch (B = " + std::to_string(B) + ", S = " + std::to_string(S) + ")");
  const StepContext ctx{arena, false, 0, 0, 0, &m.scratch};
  EncoderOutput out;
  out.B = B;
  out.S = S;
  Tensor ids = ops::upload_ids(arena, src, Shape{B, S}, m.embeddings.vocab_size(Side::source), "source");
  out.src_lengths = detail::upload_lengths(arena, src_lengths, B, S, "source length");
  // A long batch is encoded a group of sentences at a time, so that the layers' temporaries (attention
  // weights, the FFN's hidden layer) are those of at most kGroupTokens padded positions: the same bits (a
  // sentence's encoding never depends on the others in its batch), a fraction of the memory.
  constexpr int64_t kGroupTokens = 2048;
  if (capture || int64_t{B} * S <= kGroupTokens) {
    out.memory = m.encoder.forward(ids, out.src_lengths, m.embeddings, ctx, nullptr, capture ? &capture->encoder : nullptr);
    return out;
  }
  const int64_t D = config_.d_model;
  out.memory = arena.allocate(Shape{B, S, D});
  const int group = static_cast<int>(std::max<int64_t>(1, kGroupTokens / S));
  for (int b0 = 0; b0 < B; b0 += group) {
    const int n = std::min(group, B - b0);
    tensor::ArenaScope scope(m.encode_group);
    const StepContext group_ctx{m.encode_group, false, 0, 0, 0, &m.scratch};
    const Tensor y = m.encoder.forward(ops::view(ids, int64_t{b0} * S, Shape{n, S}),
                                       ops::view(out.src_lengths, b0, Shape{n}), m.embeddings, group_ctx, nullptr);
    ops::view(out.memory, int64_t{b0} * S * D, Shape{n, S, D}).copy_from(y);
  }
  return out;
}

DecodeState Transformer::start_decoding(const EncoderOutput& encoded, int max_rows, int max_length,
                                        tensor::Arena& cache_arena) {
  if (max_rows < encoded.B)
    throw Error("start_decoding: max_rows (" + std::to_string(max_rows) + ") is smaller than the batch (" +
                std::to_string(encoded.B) + ")");
  if (max_length <= 0 || max_length > config_.max_positions)
    throw Error("start_decoding: max_length " + std::to_string(max_length) + " must be in [1, " +
                std::to_string(config_.max_positions) + "] (the model's max_positions)");
  const int L = impl_->decoder.layers(), D = config_.d_model, B = encoded.B, S = encoded.S;
  DecodeState st;
  st.rows_ = B;
  st.max_rows_ = max_rows;
  st.max_length_ = max_length;
  st.B_ = B;
  st.S_ = S;
  const Shape cross_shape{B, S, D};
  const auto i32 = tensor::DType::i32;
  const Shape self_rows{int64_t{max_rows} * max_length}, counts{max_rows}, cross_rows{int64_t{max_rows} * S};
  using tensor::Arena;
  const size_t rest = L * 2 * Arena::rounded_bytes(cross_shape) + Arena::rounded_bytes(self_rows, i32) +
                      Arena::rounded_bytes(cross_rows, i32) + 2 * Arena::rounded_bytes(counts, i32);
  // The self-attention caches first, each as large as the arena's chunk allows (at least this batch's
  // need): they then start at the same places in every batch, and a reused chunk keeps resident only the
  // most any batch wrote into each (decode_state.h), not the union of every batch's layout.
  const size_t row_bytes = static_cast<size_t>(D) * sizeof(float), per_cache = Arena::rounded_bytes(Shape{1, D});
  int64_t cache_rows = int64_t{max_length} * max_rows;
  const size_t room = cache_arena.capacity_bytes();
  if (room > rest + 2 * L * per_cache)
    cache_rows = std::max<int64_t>(cache_rows, static_cast<int64_t>((room - rest) / (2 * L) / per_cache * per_cache / row_bytes));
  const Shape self_shape{cache_rows, D};
  cache_arena.reserve(L * 2 * Arena::rounded_bytes(self_shape) + rest);
  std::vector<Tensor> self(static_cast<size_t>(2 * L));
  for (auto& cache : self) cache = cache_arena.allocate(self_shape);
  for (int l = 0; l < L; ++l) {
    Tensor cross_k = cache_arena.allocate(cross_shape), cross_v = cache_arena.allocate(cross_shape);
    st.caches_.push_back(DecoderLayer::Cache{self[size_t(2 * l)], self[size_t(2 * l + 1)], cross_k, cross_v, max_rows, S});
  }
  st.self_rows_ = cache_arena.allocate(self_rows, i32);
  st.self_counts_ = cache_arena.allocate(counts, i32);
  st.cross_rows_ = cache_arena.allocate(cross_rows, i32);
  st.cross_counts_ = cache_arena.allocate(counts, i32);
  st.src_lengths_host_ = encoded.src_lengths.to_host_i32();
  st.sentence_.resize(static_cast<size_t>(B));
  for (int b = 0; b < B; ++b) st.sentence_[static_cast<size_t>(b)] = b;
  st.slots_.assign(static_cast<size_t>(max_rows) * max_length, 0);
  st.slice_start_.assign(static_cast<size_t>(max_length) + 1, 0);

  impl_->decoder.start(st.caches_, encoded.memory);
  return st;
}

Tensor Transformer::decode_steps(DecodeState& st, const std::vector<int32_t>& tokens, int n,
                                 tensor::Arena& step_arena, bool log_probs, AttentionCapture* capture) {
  Impl& m = *impl_;
  if (n < 1 || tokens.size() != static_cast<size_t>(st.rows_) * static_cast<size_t>(n))
    throw Error("decode_steps: " + std::to_string(tokens.size()) + " tokens for " + std::to_string(st.rows_) +
                " rows and " + std::to_string(n) + " positions");
  if (st.length_ + n > st.max_length_)
    throw Error("decode_steps: the decoding state is full (max_length " + std::to_string(st.max_length_) + ")");
  const int queries = st.rows_ * n;
  Tensor ids = ops::upload_ids(step_arena, tokens, Shape{queries, 1}, m.embeddings.vocab_size(Side::target),
                               "target");
  const StepKeys keys = st.begin_step(n, step_arena);
  Tensor hidden = m.decoder.forward_step(
      ids, st.caches_, keys, m.embeddings, step_arena,
      capture ? DecoderCaptures{&capture->decoder_self, &capture->decoder_cross} : DecoderCaptures{});
  const bool restricted = st.output_table_.defined();
  const Tensor& table = restricted ? st.output_table_ : m.embeddings.table(Side::target);
  Tensor logits = step_arena.allocate(Shape{queries, table.dim(0)});
  output_projection_forward(logits, hidden, table, restricted ? st.output_bias_ : m.embeddings.output_bias());
  if (log_probs) ops::log_softmax(logits);
  st.length_ += n;
  return logits;
}

void Transformer::restrict_output(DecodeState& st, const std::vector<int32_t>& columns, tensor::Arena& arena) {
  const Tensor& table = impl_->embeddings.table(Side::target);
  const Tensor& bias = impl_->embeddings.output_bias();
  const int64_t C = static_cast<int64_t>(columns.size()), D = table.dim(1);
  if (C == 0) throw Error("restrict_output: no columns");
  const Tensor index = ops::upload_ids(arena, columns, Shape{C}, static_cast<int>(table.dim(0)), "shortlist");
  st.output_table_ = arena.allocate(Shape{C, D});
  ops::gather_rows(st.output_table_, table, index, C, D);
  st.output_bias_ = Tensor();
  if (bias.defined()) {
    st.output_bias_ = arena.allocate(Shape{C});
    ops::gather_rows(st.output_bias_, bias, index, C, 1);
  }
}

const float* Transformer::restricted_table(const DecodeState& st) {
  return st.output_table_.defined() ? st.output_table_.f32() : nullptr;
}

void Transformer::reorder(DecodeState& st, const std::vector<int32_t>& index) {
  const int rows = static_cast<int>(index.size());
  if (rows > st.max_rows_)
    throw Error("reorder: " + std::to_string(rows) + " rows exceed max_rows " + std::to_string(st.max_rows_));
  for (int32_t i : index)
    if (i < 0 || i >= st.rows_)
      throw Error("reorder: row " + std::to_string(i) + " is outside [0, " + std::to_string(st.rows_) + ")");
  st.select_rows(index);
}

}  // namespace tt::nn
