#include "nn/transformer.h"

#include <cmath>
#include <string>

#include "nn/decoder.h"
#include "nn/embedding.h"
#include "nn/encoder.h"
#include "nn/loss.h"
#include "ops/embedding.h"
#include "ops/softmax.h"
#include "ops/copy.h"
#include "ops/cross_entropy.h"
#include "ops/view.h"
#include "util/check.h"
#include "util/error.h"
#include "util/rng.h"

namespace tt::nn {

using tensor::Shape;
using tensor::Tensor;

struct Transformer::Impl {
  explicit Impl(backend::Backend& backend) : scratch(backend) {}
  Embeddings embeddings;
  Encoder encoder;
  Decoder decoder;
  Encoder::Saved encoder_saved;
  Decoder::Saved decoder_saved;
  tensor::Arena scratch;  // per-layer backward temporaries, reset after each layer

  // Drops the saved activations' tensor handles (keeping the vectors' capacity): after a step nothing may
  // keep an arena chunk alive, or the arena's consolidation would hold old and new chunks at once.
  void release_saved() {
    encoder_saved.embedding = {};
    encoder_saved.final_norm = {};
    for (auto& l : encoder_saved.layers) l = {};
    decoder_saved.embedding = {};
    decoder_saved.final_norm = {};
    for (auto& l : decoder_saved.layers) l = {};
  }

  void declare(ParameterSet& params, const ModelConfig& config) {
    embeddings.declare(params, config);
    encoder.declare(params, config);
    decoder.declare(params, config);
  }
};

namespace {

// The batch's device tensors, validated against the model.
struct DeviceBatch {
  Tensor src, src_lengths, tgt_in, tgt_out, tgt_lengths;
};

void check_lengths(const std::vector<int32_t>& lengths, int B, int max, const char* what) {
  if (static_cast<int>(lengths.size()) != B)
    throw Error(std::string(what) + ": expected " + std::to_string(B) + " lengths, got " +
                std::to_string(lengths.size()));
  for (int b = 0; b < B; ++b)
    if (lengths[static_cast<size_t>(b)] < 0 || lengths[static_cast<size_t>(b)] > max)
      throw Error(std::string(what) + " of sentence " + std::to_string(b) + " is " +
                  std::to_string(lengths[static_cast<size_t>(b)]) + ", outside [0, " + std::to_string(max) + "]");
}

Tensor upload_lengths(tensor::Arena& arena, const std::vector<int32_t>& lengths, int B, int max, const char* what) {
  check_lengths(lengths, B, max, what);
  Tensor t = arena.allocate(Shape{B}, tensor::DType::i32);
  ops::upload(t, lengths);
  return t;
}

DeviceBatch upload(const Batch& batch, const Embeddings& embeddings, tensor::Arena& arena, bool targets) {
  if (batch.B <= 0 || batch.S <= 0 || batch.T <= 0)
    throw Error("empty batch (B = " + std::to_string(batch.B) + ", S = " + std::to_string(batch.S) +
                ", T = " + std::to_string(batch.T) + ")");
  DeviceBatch d;
  d.src = ops::upload_ids(arena, batch.src, Shape{batch.B, batch.S}, embeddings.vocab_size(Side::source), "source");
  d.src_lengths = upload_lengths(arena, batch.src_lengths, batch.B, batch.S, "source length");
  d.tgt_in = ops::upload_ids(arena, batch.tgt_in, Shape{batch.B, batch.T}, embeddings.vocab_size(Side::target),
                             "target input");
  d.tgt_lengths = upload_lengths(arena, batch.tgt_lengths, batch.B, batch.T, "target length");
  if (targets)
    d.tgt_out = ops::upload_ids(arena, batch.tgt_out, Shape{batch.B * batch.T}, embeddings.vocab_size(Side::target),
                                "target output");
  return d;
}

// Box-Muller normal from two Philox uniforms.
float normal(uint64_t seed, uint64_t stream, uint64_t i) {
  const double u1 = 1.0 - util::philox_uniform(seed, stream, 2 * i);  // (0, 1]
  const double u2 = util::philox_uniform(seed, stream, 2 * i + 1);
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2));
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Transformer::Transformer(const ModelConfig& config, backend::Backend& backend)
    : config_(config), backend_(backend), impl_(std::make_unique<Impl>(backend)) {
  config_.validate();
  impl_->declare(params_, config_);
  params_.allocate(backend_);
  impl_->embeddings.bind(params_, backend_);
  impl_->encoder.bind(params_);
  impl_->decoder.bind(params_);
}

Transformer::~Transformer() = default;

std::vector<std::pair<std::string, Shape>> Transformer::parameter_shapes(const ModelConfig& config) {
  config.validate();
  ParameterSet params;
  Embeddings embeddings;
  Encoder encoder;
  Decoder decoder;
  embeddings.declare(params, config);
  encoder.declare(params, config);
  decoder.declare(params, config);
  std::vector<std::pair<std::string, Shape>> shapes;
  for (const auto& p : params.all()) shapes.emplace_back(p.name, p.shape);
  return shapes;
}

void Transformer::init_parameters(uint64_t seed) {
  const float embedding_std = 1.0f / std::sqrt(static_cast<float>(config_.d_model));
  std::vector<float> host;
  for (size_t i = 0; i < params_.all().size(); ++i) {
    const Parameter& p = params_[i];
    const uint64_t stream = util::rng_stream(util::RngPurpose::init, 0, static_cast<uint32_t>(i));
    host.resize(static_cast<size_t>(p.shape.numel()));
    const bool embedding = p.name.rfind("embeddings.", 0) == 0;
    if (embedding) {
      for (size_t j = 0; j < host.size(); ++j) host[j] = embedding_std * normal(seed, stream, j);
    } else if (ends_with(p.name, "norm.weight")) {
      std::fill(host.begin(), host.end(), 1.0f);
    } else if (ends_with(p.name, ".bias")) {
      std::fill(host.begin(), host.end(), 0.0f);
    } else {
      TT_CHECK_MSG(p.shape.rank() == 2, p.name);
      // Xavier (Glorot) uniform: U(-a, a), a = sqrt(6 / (fan_in + fan_out)).
      const float a = std::sqrt(6.0f / static_cast<float>(p.shape[0] + p.shape[1]));
      for (size_t j = 0; j < host.size(); ++j) host[j] = a * (2.0f * util::philox_uniform(seed, stream, j) - 1.0f);
    }
    ops::upload(p.value, host);
  }
}

LossStats Transformer::forward_backward(const Batch& batch, tensor::Arena& arena, const StepRng& rng,
                                        float grad_scale) {
  Impl& m = *impl_;
  struct Release {  // also on exceptions
    Impl& m;
    ~Release() { m.release_saved(); }
  } release{m};
  const StepContext ctx{arena, rng.dropout, rng.seed, rng.step};
  const DeviceBatch d = upload(batch, m.embeddings, arena, true);
  const int64_t N = int64_t{batch.B} * batch.T, D = config_.d_model;

  Tensor memory = m.encoder.forward(d.src, d.src_lengths, m.embeddings, ctx, &m.encoder_saved);
  Tensor hidden = m.decoder.forward(d.tgt_in, d.tgt_lengths, memory, d.src_lengths, m.embeddings, ctx,
                                    &m.decoder_saved);
  const Tensor& table = m.embeddings.table(Side::target);
  Tensor logits = arena.allocate(Shape{N, table.dim(0)});
  output_projection_forward(logits, hidden, table);
  LossStats stats = label_smoothed_loss(logits, d.tgt_out, batch.tgt_out, config_.label_smoothing, config_.pad_id,
                                        grad_scale, arena);

  Tensor dhidden = arena.allocate(Shape{batch.B, batch.T, D});
  output_projection_backward(dhidden, m.embeddings.table_grad(Side::target), logits, hidden, table);
  Tensor dmemory = arena.allocate(memory.shape());
  dmemory.zero();
  m.decoder.backward(dhidden, dmemory, m.decoder_saved, m.embeddings, arena, m.scratch);
  m.encoder.backward(dmemory, m.encoder_saved, m.embeddings, arena, m.scratch);
  return stats;
}

// The teacher-forced forward pass without dropout and without saving anything: logits [B, T, V].
static Tensor inference_logits(Transformer::Impl& m, const DeviceBatch& d, const Batch& batch, tensor::Arena& arena,
                               AttentionCapture* capture) {
  const StepContext ctx{arena, false, 0, 0};
  Tensor memory = m.encoder.forward(d.src, d.src_lengths, m.embeddings, ctx, nullptr,
                                    capture ? &capture->encoder : nullptr);
  Tensor hidden = m.decoder.forward(d.tgt_in, d.tgt_lengths, memory, d.src_lengths, m.embeddings, ctx, nullptr,
                                    capture ? &capture->decoder_self : nullptr,
                                    capture ? &capture->decoder_cross : nullptr);
  const Tensor& table = m.embeddings.table(Side::target);
  Tensor logits = arena.allocate(Shape{batch.B, batch.T, table.dim(0)});
  output_projection_forward(logits.reshape(Shape{int64_t{batch.B} * batch.T, table.dim(0)}), hidden, table);
  return logits;
}

LossStats Transformer::evaluate(const Batch& batch, tensor::Arena& arena) {
  const DeviceBatch d = upload(batch, impl_->embeddings, arena, true);
  Tensor logits = inference_logits(*impl_, d, batch, arena, nullptr);
  return label_smoothed_loss(logits.reshape(Shape{logits.numel() / logits.dim(2), logits.dim(2)}), d.tgt_out,
                             batch.tgt_out, config_.label_smoothing, config_.pad_id, 0.0f, arena);
}

Tensor Transformer::forward_logits(const Batch& batch, tensor::Arena& arena, AttentionCapture* capture) {
  const DeviceBatch d = upload(batch, impl_->embeddings, arena, false);
  return inference_logits(*impl_, d, batch, arena, capture);
}

EncoderOutput Transformer::encode(const std::vector<int32_t>& src, const std::vector<int32_t>& src_lengths, int B,
                                  int S, tensor::Arena& arena, AttentionCapture* capture) {
  Impl& m = *impl_;
  if (B <= 0 || S <= 0) throw Error("encode: empty batch (B = " + std::to_string(B) + ", S = " + std::to_string(S) + ")");
  const StepContext ctx{arena, false, 0, 0};
  EncoderOutput out;
  out.B = B;
  out.S = S;
  Tensor ids = ops::upload_ids(arena, src, Shape{B, S}, m.embeddings.vocab_size(Side::source), "source");
  out.src_lengths = upload_lengths(arena, src_lengths, B, S, "source length");
  out.memory = m.encoder.forward(ids, out.src_lengths, m.embeddings, ctx, nullptr, capture ? &capture->encoder : nullptr);
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
  const int L = impl_->decoder.layers(), D = config_.d_model, S = encoded.S;
  DecodeState st;
  st.rows_ = encoded.B;
  st.max_rows_ = max_rows;
  st.max_length_ = max_length;
  st.S_ = S;
  const Shape self_shape{max_length, max_rows, D}, cross_shape{max_rows, S, D};
  for (int l = 0; l < L; ++l) {
    st.self_k_.push_back(cache_arena.allocate(self_shape));
    st.self_v_.push_back(cache_arena.allocate(self_shape));
    st.cross_k_.push_back(cache_arena.allocate(cross_shape));
    st.cross_v_.push_back(cache_arena.allocate(cross_shape));
  }
  st.spare_self_ = cache_arena.allocate(self_shape);
  st.spare_cross_ = cache_arena.allocate(cross_shape);
  st.index_self_ = cache_arena.allocate(Shape{int64_t{max_length} * max_rows}, tensor::DType::i32);
  st.index_cross_ = cache_arena.allocate(Shape{max_rows}, tensor::DType::i32);
  st.src_lengths_ = cache_arena.allocate(Shape{max_rows}, tensor::DType::i32);
  st.src_lengths_host_ = encoded.src_lengths.to_host_i32();
  ops::upload(ops::view(st.src_lengths_, 0, Shape{encoded.B}), st.src_lengths_host_);

  std::vector<DecoderLayer::Cache> caches;
  for (int l = 0; l < L; ++l)
    caches.push_back(DecoderLayer::Cache{st.self_k_[l], st.self_v_[l], st.cross_k_[l], st.cross_v_[l], max_rows, S});
  impl_->decoder.start(caches, encoded.memory);
  return st;
}

Tensor Transformer::decode_step(DecodeState& st, const std::vector<int32_t>& tokens, tensor::Arena& step_arena,
                                bool log_probs, AttentionCapture* capture) {
  Impl& m = *impl_;
  if (static_cast<int>(tokens.size()) != st.rows_)
    throw Error("decode_step: " + std::to_string(tokens.size()) + " tokens for " + std::to_string(st.rows_) +
                " rows");
  if (st.length_ >= st.max_length_)
    throw Error("decode_step: the decoding state is full (max_length " + std::to_string(st.max_length_) + ")");
  Tensor ids = ops::upload_ids(step_arena, tokens, Shape{st.rows_, 1}, m.embeddings.vocab_size(Side::target),
                               "target");
  std::vector<DecoderLayer::Cache> caches;
  for (size_t l = 0; l < st.self_k_.size(); ++l)
    caches.push_back(DecoderLayer::Cache{st.self_k_[l], st.self_v_[l], st.cross_k_[l], st.cross_v_[l], st.max_rows_,
                                         st.S_});
  Tensor hidden = m.decoder.forward_step(ids, caches, st.length_, ops::view(st.src_lengths_, 0, Shape{st.rows_}),
                                         m.embeddings, step_arena, capture ? &capture->decoder_self : nullptr,
                                         capture ? &capture->decoder_cross : nullptr);
  const Tensor& table = m.embeddings.table(Side::target);
  Tensor logits = step_arena.allocate(Shape{st.rows_, table.dim(0)});
  output_projection_forward(logits, hidden, table);
  if (log_probs) ops::log_softmax(logits);
  ++st.length_;
  return logits;
}

void Transformer::reorder(DecodeState& st, const std::vector<int32_t>& index) {
  const int rows = static_cast<int>(index.size());
  if (rows > st.max_rows_)
    throw Error("reorder: " + std::to_string(rows) + " rows exceed max_rows " + std::to_string(st.max_rows_));
  for (int32_t i : index)
    if (i < 0 || i >= st.rows_)
      throw Error("reorder: row " + std::to_string(i) + " is outside [0, " + std::to_string(st.rows_) + ")");
  const int D = config_.d_model;
  // Self caches: gather every (position, row) of the cached length, in the full time-major layout.
  const int64_t n_self = int64_t{st.length_} * st.max_rows_;
  st.host_index_.assign(static_cast<size_t>(n_self), 0);
  for (int t = 0; t < st.length_; ++t)
    for (int i = 0; i < rows; ++i)
      st.host_index_[static_cast<size_t>(int64_t{t} * st.max_rows_ + i)] = t * st.max_rows_ + index[static_cast<size_t>(i)];
  if (n_self > 0) {
    ops::upload(ops::view(st.index_self_, 0, Shape{n_self}), st.host_index_);
    for (size_t l = 0; l < st.self_k_.size(); ++l) {
      for (Tensor* cache : {&st.self_k_[l], &st.self_v_[l]}) {
        ops::gather_rows(st.spare_self_, *cache, st.index_self_, n_self, D);
        std::swap(*cache, st.spare_self_);
      }
    }
  }
  // Cross caches and source lengths: one row per hypothesis.
  ops::upload(ops::view(st.index_cross_, 0, Shape{rows}), index);
  for (size_t l = 0; l < st.cross_k_.size(); ++l) {
    for (Tensor* cache : {&st.cross_k_[l], &st.cross_v_[l]}) {
      ops::gather_rows(st.spare_cross_, *cache, st.index_cross_, rows, int64_t{st.S_} * D);
      std::swap(*cache, st.spare_cross_);
    }
  }
  std::vector<int32_t> lengths(static_cast<size_t>(rows));
  for (int i = 0; i < rows; ++i) lengths[static_cast<size_t>(i)] = st.src_lengths_host_[static_cast<size_t>(index[static_cast<size_t>(i)])];
  st.src_lengths_host_ = lengths;
  ops::upload(ops::view(st.src_lengths_, 0, Shape{rows}), lengths);
  st.rows_ = rows;
}

}  // namespace tt::nn
