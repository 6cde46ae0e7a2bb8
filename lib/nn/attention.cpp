#include "nn/attention.h"

#include <cmath>
#include <optional>

#include "ops/attention.h"
#include "ops/decoding.h"
#include "ops/elementwise.h"
#include "ops/matmul.h"
#include "ops/softmax.h"
#include "ops/view.h"
#include "util/check.h"

namespace tt::nn {

namespace {

using backend::MatrixStrides;
using tensor::Shape;
using tensor::Tensor;

// One strided [B, H, T, Dh] operand: a tensor starting at the operand's first element, and its strides.
struct Operand {
  Tensor t;
  MatrixStrides s;
};

// Member i of a projection group's output for B sentences of T rows each, viewed per head.
Operand member(const LinearGroup& group, const Tensor& y, int i, int B, int T, int Dh) {
  const int64_t ld = group.member_ld(i);
  return Operand{ops::tail(y, group.member_offset(i, int64_t{B} * T)), MatrixStrides{T * ld, Dh, ld}};
}

// A [B, T, D] tensor (ctx, single projections) viewed per head.
Operand heads(const Tensor& t, int T, int D, int Dh) { return Operand{t, MatrixStrides{int64_t{T} * D, Dh, D}}; }

// The fused attention kernels' view of a per-head operand (its strides are {T * ld, Dh, ld}).
ops::HeadRows rows(const Operand& x) { return ops::HeadRows{x.t, x.s.ld}; }

}  // namespace

void MultiHeadAttention::declare(ParameterSet& params, const std::string& prefix, int D, int H, Kind kind,
                                 float attention_dropout, uint32_t site) {
  D_ = D;
  H_ = H;
  kind_ = kind;
  attention_dropout_ = attention_dropout;
  site_ = site;
  // Weights first, then biases: adjacent in the flat buffer, so one GEMM covers q|k|v (or k|v).
  q_.declare_weight(params, prefix + ".q_proj", D, D);
  k_.declare_weight(params, prefix + ".k_proj", D, D);
  v_.declare_weight(params, prefix + ".v_proj", D, D);
  q_.declare_bias(params, prefix + ".q_proj");
  k_.declare_bias(params, prefix + ".k_proj");
  v_.declare_bias(params, prefix + ".v_proj");
  out_.declare(params, prefix + ".out_proj", D, D);
}

void MultiHeadAttention::bind(const ParameterSet& params) {
  q_.bind(params);
  k_.bind(params);
  v_.bind(params);
  out_.bind(params);
  if (kind_ == Kind::self) qkv_.bind(params, {&q_, &k_, &v_});
  else kv_.bind(params, {&k_, &v_});
}

void MultiHeadAttention::forward(const Tensor& out, const Tensor& x, const Tensor& memory,
                                 const Tensor& key_lengths, bool causal, const StepContext& ctx, Saved* saved,
                                 const Tensor& capture, bool fused) const {
  TT_CHECK(x.shape().rank() == 3 && x.dim(2) == D_);
  const int B = static_cast<int>(x.dim(0)), Tq = static_cast<int>(x.dim(1)), Dh = D_ / H_;
  const bool self = kind_ == Kind::self;
  TT_CHECK(self != memory.defined());
  const int Tk = self ? Tq : static_cast<int>(memory.dim(1));
  tensor::Arena& arena = ctx.arena;
  // bf16 training: q, k, v, the weights after dropout and the context are saved only rounded, as every
  // product reading them rounds them; the fp32 projections and context live in the step's temporaries.
  tensor::Arena* temporaries = saved ? ctx.bf16_temporaries(x.backend()) : nullptr;
  const bool bf16_saved = temporaries != nullptr;
  std::optional<tensor::ArenaScope> scope;
  if (bf16_saved) scope.emplace(*temporaries);
  tensor::Arena& fp32_arena = bf16_saved ? *temporaries : arena;

  Tensor qkv, kv;
  Operand q, k, v;
  // What backward reads again, kept in bf16 training (ops::KeptBf16): the projections' inputs and the
  // output projection's (the context), and what the attention products keep.
  ops::KeptBf16 x_kept, memory_kept, ctx_kept;
  ops::AttentionKept kept;
  if (saved) x_kept = ops::KeptBf16(x);
  // Stored in bf16, the projections' biases are added by the kernel that rounds them (below).
  if (self) {
    qkv = fp32_arena.allocate(Shape{B, Tq, 3 * D_});
    if (bf16_saved) qkv_.forward_without_bias(qkv, x);
    else qkv_.forward(qkv, x);
    q = member(qkv_, qkv, 0, B, Tq, Dh);
    k = member(qkv_, qkv, 1, B, Tq, Dh);
    v = member(qkv_, qkv, 2, B, Tq, Dh);
  } else {
    qkv = fp32_arena.allocate(Shape{B, Tq, D_});
    if (bf16_saved) q_.forward_without_bias(qkv, x);
    else q_.forward(qkv, x);
    kv = fp32_arena.allocate(Shape{B, Tk, 2 * D_});
    if (saved) memory_kept = ops::KeptBf16(memory);
    if (bf16_saved) kv_.forward_without_bias(kv, memory);
    else kv_.forward(kv, memory);
    q = heads(qkv, Tq, D_, Dh);
    k = member(kv_, kv, 0, B, Tk, Dh);
    v = member(kv_, kv, 1, B, Tk, Dh);
  }
  const float p = ctx.rate(attention_dropout_);
  Tensor probs = arena.allocate(Shape{B, H_, Tq, Tk});
  Tensor dropped =
      p > 0 ? arena.allocate(probs.shape(), ops::attention_dropout_dtype(x.backend(), bf16_saved)) : Tensor{};
  Tensor heads_out = fp32_arena.allocate(Shape{B, Tq, D_});
  const backend::DropoutKey key = ctx.key(site_);
  const ops::AttentionSizes z{B, H_, Tq, Tk, Dh};
  const float scale = 1.0f / std::sqrt(static_cast<float>(Dh));
  Tensor q16, k16, v16;
  if (bf16_saved) {
    auto stored = [&](const Operand& o, int T, const Linear& projection) {
      Tensor t = arena.allocate(Shape{B, H_, T, Dh}, tensor::DType::bf16);
      ops::round_heads_to_bf16(t, rows(o), B, T, H_, Dh, projection.bias());
      return t;
    };
    q16 = stored(q, Tq, q_), k16 = stored(k, Tk, k_), v16 = stored(v, Tk, v_);
    ops::attention_forward_bf16(ops::HeadRows{heads_out, D_}, probs, dropped, q16, k16, v16, key_lengths, z, scale,
                                causal, p, key, saved ? &kept : nullptr);
    qkv = kv = Tensor{};  // not saved
  } else {
    ops::attention_forward(ops::HeadRows{heads_out, D_}, probs, dropped, rows(q), rows(k), rows(v), key_lengths, z,
                           scale, causal, p, key, saved ? &kept : nullptr);
  }
  if (capture.defined()) {
    TT_CHECK_MSG(capture.numel() == probs.numel(),
                 "attention capture " + capture.shape().str() + " for weights " + probs.shape().str());
    capture.copy_from(probs);
  }
  Tensor context = heads_out;
  if (bf16_saved) {
    context = arena.allocate(heads_out.shape(), tensor::DType::bf16);
    ops::round_to_bf16(context, heads_out);
  }
  if (saved) ctx_kept = ops::KeptBf16(context);
  if (fused) out_.forward_without_bias(out, context);
  else out_.forward(out, context);
  if (saved)
    *saved = Saved{x, memory, qkv, kv, probs, dropped, context, key_lengths, key, p, B, Tq, Tk, causal, q16, k16,
                   v16, std::move(x_kept), std::move(memory_kept), std::move(ctx_kept), std::move(kept)};
}

void MultiHeadAttention::backward(const Tensor& dx, const Tensor& dmemory, const Tensor& dout, const Saved& s,
                                  tensor::Arena& scratch, bool fused) const {
  const int Dh = D_ / H_;
  const ops::AttentionSizes z{s.B, H_, s.Tq, s.Tk, Dh};
  const float scale = 1.0f / std::sqrt(static_cast<float>(Dh));
  Tensor dctx = scratch.allocate(Shape{s.B, s.Tq, D_});
  if (fused) out_.backward_without_bias(dctx, dout, s.ctx);
  else out_.backward(dctx, dout, s.ctx);
  s.ctx_kept.release();
  Tensor dprobs = scratch.allocate(s.probs.shape());
  const ops::HeadRows dc{dctx, D_};
  const bool bf16_saved = s.q16.defined();
  if (kind_ == Kind::self) {
    Tensor dqkv = scratch.allocate(Shape{s.B, s.Tq, 3 * D_});
    auto part = [&](const Tensor& t, int i) { return rows(member(qkv_, t, i, s.B, s.Tq, Dh)); };
    if (bf16_saved)
      ops::attention_backward_bf16(part(dqkv, 0), part(dqkv, 1), part(dqkv, 2), dprobs, dc, s.probs, s.dropped, s.q16,
                                   s.k16, s.v16, z, scale, s.p, s.key, &s.kept);
    else
      ops::attention_backward(part(dqkv, 0), part(dqkv, 1), part(dqkv, 2), dprobs, dc, s.probs, s.dropped,
                              part(s.qkv, 0), part(s.qkv, 1), part(s.qkv, 2), z, scale, s.p, s.key, &s.kept);
    qkv_.backward(dx, dqkv, s.x, /*accumulate_dx=*/fused);
    s.x_kept.release();
  } else {
    Tensor dq = scratch.allocate(Shape{s.B, s.Tq, D_});
    Tensor dkv = scratch.allocate(Shape{s.B, s.Tk, 2 * D_});
    auto part = [&](const Tensor& t, int i) { return rows(member(kv_, t, i, s.B, s.Tk, Dh)); };
    if (bf16_saved)
      ops::attention_backward_bf16(ops::HeadRows{dq, D_}, part(dkv, 0), part(dkv, 1), dprobs, dc, s.probs, s.dropped,
                                   s.q16, s.k16, s.v16, z, scale, s.p, s.key, &s.kept);
    else
      ops::attention_backward(ops::HeadRows{dq, D_}, part(dkv, 0), part(dkv, 1), dprobs, dc, s.probs, s.dropped,
                              ops::HeadRows{s.qkv, D_}, part(s.kv, 0), part(s.kv, 1), z, scale, s.p, s.key, &s.kept);
    q_.backward(dx, dq, s.x, /*accumulate_dx=*/fused);
    s.x_kept.release();
    kv_.backward(dmemory, dkv, s.memory, /*accumulate_dx=*/true);
    s.memory_kept.release();
  }
}

void MultiHeadAttention::forward_step(const Tensor& out, const Tensor& x, const LayerCache& cache,
                                      const StepKeys& keys, tensor::Arena& arena, const Tensor& capture) const {
  TT_CHECK(kind_ == Kind::self);
  const Tensor &k_cache = cache.self_k, &v_cache = cache.self_v;
  const int64_t first_row = keys.first_row;
  const int queries = static_cast<int>(x.dim(0));
  TT_CHECK(x.dim(1) == 1 && (first_row + queries) * D_ <= k_cache.numel());
  Tensor q = arena.allocate(Shape{queries, D_});
  q_.forward(q, x);
  // The queries' own keys and values: the new time slices, one block of the cache.
  k_.forward(ops::view(k_cache, first_row * D_, Shape{queries, D_}), x);
  v_.forward(ops::view(v_cache, first_row * D_, Shape{queries, D_}), x);
  Tensor ctx = arena.allocate(Shape{queries, 1, D_});
  ops::attention_decode(ctx, capture, q, k_cache, v_cache, keys.self_rows, keys.self_counts, H_);
  out_.forward(out, ctx);
}

void MultiHeadAttention::project_memory(const Tensor& k, const Tensor& v, const Tensor& memory) const {
  TT_CHECK(kind_ == Kind::cross);
  k_.forward(k, memory);
  v_.forward(v, memory);
}

void MultiHeadAttention::forward_cross_step(const Tensor& out, const Tensor& x, const LayerCache& cache,
                                            const StepKeys& keys, tensor::Arena& arena, const Tensor& capture) const {
  TT_CHECK(kind_ == Kind::cross);
  const int rows = static_cast<int>(x.dim(0));
  Tensor q = arena.allocate(Shape{rows, D_});
  q_.forward(q, x);
  Tensor ctx = arena.allocate(Shape{rows, 1, D_});
  ops::attention_decode(ctx, capture, q, cache.cross_k, cache.cross_v, keys.cross_rows, keys.cross_counts, H_);
  out_.forward(out, ctx);
}

}  // namespace tt::nn
