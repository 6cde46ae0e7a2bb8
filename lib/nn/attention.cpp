#include "nn/attention.h"

#include <cmath>

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

MatrixStrides score_strides(int H, int Tq, int Tk) {
  return MatrixStrides{int64_t{H} * Tq * Tk, int64_t{Tq} * Tk, Tk};
}

struct Sizes {
  int B, H, Tq, Tk, Dh;
};

// ctx = softmax(mask(Q K^T / sqrt(Dh))) V, probs kept; dropped = dropout(probs) when p > 0.
void attend(const Tensor& ctx, const Tensor& probs, const Tensor& dropped, const Operand& q, const Operand& k,
            const Operand& v, const Tensor& key_lengths, Sizes z, bool causal, float p,
            backend::DropoutKey key, const Tensor& capture) {
  const MatrixStrides ps = score_strides(z.H, z.Tq, z.Tk);
  ops::batched_matmul(probs, ps, q.t, q.s, false, k.t, k.s, true, {z.B, z.H, z.Tq, z.Tk, z.Dh});
  ops::attention_softmax_forward(probs, key_lengths, 1.0f / std::sqrt(static_cast<float>(z.Dh)), causal,
                                 0);
  if (capture.defined()) {
    TT_CHECK_MSG(capture.numel() == probs.numel(),
                 "attention capture " + capture.shape().str() + " for weights " + probs.shape().str());
    capture.copy_from(probs);
  }
  const Tensor& weights = p > 0 ? dropped : probs;
  if (p > 0) ops::dropout_forward(dropped, probs, p, key);
  const int D = z.H * z.Dh;
  Operand c = heads(ctx, z.Tq, D, z.Dh);
  ops::batched_matmul(c.t, c.s, weights, ps, false, v.t, v.s, false, {z.B, z.H, z.Tq, z.Dh, z.Tk});
}

// Backward of attend(): dq, dk, dv assigned (each covers all heads' columns of its rows).
void attend_backward(const Operand& dq, const Operand& dk, const Operand& dv, const Tensor& dctx,
                     const MultiHeadAttention::Saved& s, const Operand& q, const Operand& k, const Operand& v,
                     int H, int Dh, tensor::Arena& scratch) {
  const Sizes z{s.B, H, s.Tq, s.Tk, Dh};
  const MatrixStrides ps = score_strides(H, s.Tq, s.Tk);
  const Operand c = heads(dctx, s.Tq, H * Dh, Dh);
  const Tensor& weights = s.p > 0 ? s.dropped : s.probs;
  Tensor dp = scratch.allocate(s.probs.shape());
  // dP = dctx V^T ; dV = P^T dctx
  ops::batched_matmul(dp, ps, c.t, c.s, false, v.t, v.s, true, {z.B, z.H, z.Tq, z.Tk, z.Dh});
  ops::batched_matmul(dv.t, dv.s, weights, ps, true, c.t, c.s, false, {z.B, z.H, z.Tk, z.Dh, z.Tq});
  if (s.p > 0) ops::dropout_backward(dp, dp, s.p, s.key);
  ops::attention_softmax_backward(dp, s.probs, 1.0f / std::sqrt(static_cast<float>(Dh)));
  // dQ = dS K ; dK = dS^T Q
  ops::batched_matmul(dq.t, dq.s, dp, ps, false, k.t, k.s, false, {z.B, z.H, z.Tq, z.Dh, z.Tk});
  ops::batched_matmul(dk.t, dk.s, dp, ps, true, q.t, q.s, false, {z.B, z.H, z.Tk, z.Dh, z.Tq});
}

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
                                 const Tensor& capture) const {
  TT_CHECK(x.shape().rank() == 3 && x.dim(2) == D_);
  const int B = static_cast<int>(x.dim(0)), Tq = static_cast<int>(x.dim(1)), Dh = D_ / H_;
  const bool self = kind_ == Kind::self;
  TT_CHECK(self != memory.defined());
  const int Tk = self ? Tq : static_cast<int>(memory.dim(1));
  tensor::Arena& arena = ctx.arena;

  Tensor qkv, kv;
  Operand q, k, v;
  if (self) {
    qkv = arena.allocate(Shape{B, Tq, 3 * D_});
    qkv_.forward(qkv, x);
    q = member(qkv_, qkv, 0, B, Tq, Dh);
    k = member(qkv_, qkv, 1, B, Tq, Dh);
    v = member(qkv_, qkv, 2, B, Tq, Dh);
  } else {
    qkv = arena.allocate(Shape{B, Tq, D_});
    q_.forward(qkv, x);
    kv = arena.allocate(Shape{B, Tk, 2 * D_});
    kv_.forward(kv, memory);
    q = heads(qkv, Tq, D_, Dh);
    k = member(kv_, kv, 0, B, Tk, Dh);
    v = member(kv_, kv, 1, B, Tk, Dh);
  }
  const float p = ctx.rate(attention_dropout_);
  Tensor probs = arena.allocate(Shape{B, H_, Tq, Tk});
  Tensor dropped = p > 0 ? arena.allocate(probs.shape()) : Tensor{};
  Tensor heads_out = arena.allocate(Shape{B, Tq, D_});
  const backend::DropoutKey key = ctx.key(site_);
  attend(heads_out, probs, dropped, q, k, v, key_lengths, {B, H_, Tq, Tk, Dh}, causal, p, key, capture);
  out_.forward(out, heads_out);
  if (saved) *saved = Saved{x, memory, qkv, kv, probs, dropped, heads_out, key_lengths, key, p, B, Tq, Tk, causal};
}

void MultiHeadAttention::backward(const Tensor& dx, const Tensor& dmemory, const Tensor& dout, const Saved& s,
                                  tensor::Arena& scratch) const {
  const int Dh = D_ / H_;
  Tensor dctx = scratch.allocate(Shape{s.B, s.Tq, D_});
  out_.backward(dctx, dout, s.ctx);
  if (kind_ == Kind::self) {
    Tensor dqkv = scratch.allocate(s.qkv.shape());
    attend_backward(member(qkv_, dqkv, 0, s.B, s.Tq, Dh), member(qkv_, dqkv, 1, s.B, s.Tq, Dh),
                    member(qkv_, dqkv, 2, s.B, s.Tq, Dh), dctx, s, member(qkv_, s.qkv, 0, s.B, s.Tq, Dh),
                    member(qkv_, s.qkv, 1, s.B, s.Tq, Dh), member(qkv_, s.qkv, 2, s.B, s.Tq, Dh), H_, Dh, scratch);
    qkv_.backward(dx, dqkv, s.x);
  } else {
    Tensor dq = scratch.allocate(s.qkv.shape());
    Tensor dkv = scratch.allocate(s.kv.shape());
    attend_backward(heads(dq, s.Tq, D_, Dh), member(kv_, dkv, 0, s.B, s.Tk, Dh), member(kv_, dkv, 1, s.B, s.Tk, Dh),
                    dctx, s, heads(s.qkv, s.Tq, D_, Dh), member(kv_, s.kv, 0, s.B, s.Tk, Dh),
                    member(kv_, s.kv, 1, s.B, s.Tk, Dh), H_, Dh, scratch);
    q_.backward(dx, dq, s.x);
    kv_.backward(dmemory, dkv, s.memory, /*accumulate_dx=*/true);
  }
}

void MultiHeadAttention::forward_step(const Tensor& out, const Tensor& x, const Tensor& k_cache,
                                      const Tensor& v_cache, int t, int max_rows, const Tensor& key_rows,
                                      const Tensor& key_counts, tensor::Arena& arena, const Tensor& capture) const {
  TT_CHECK(kind_ == Kind::self);
  const int rows = static_cast<int>(x.dim(0));
  TT_CHECK(x.dim(1) == 1 && rows <= max_rows);
  Tensor q = arena.allocate(Shape{rows, D_});
  q_.forward(q, x);
  const int64_t step = int64_t{max_rows} * D_;  // one time slice of the cache
  k_.forward(ops::view(k_cache, t * step, Shape{rows, D_}), x);
  v_.forward(ops::view(v_cache, t * step, Shape{rows, D_}), x);
  Tensor ctx = arena.allocate(Shape{rows, 1, D_});
  ops::attention_decode(ctx, capture, q, k_cache, v_cache, key_rows, key_counts, H_);
  out_.forward(out, ctx);
}

void MultiHeadAttention::project_memory(const Tensor& k, const Tensor& v, const Tensor& memory) const {
  TT_CHECK(kind_ == Kind::cross);
  k_.forward(k, memory);
  v_.forward(v, memory);
}

void MultiHeadAttention::forward_cross_step(const Tensor& out, const Tensor& x, const Tensor& k, const Tensor& v,
                                            const Tensor& key_rows, const Tensor& key_counts, tensor::Arena& arena,
                                            const Tensor& capture) const {
  TT_CHECK(kind_ == Kind::cross);
  const int rows = static_cast<int>(x.dim(0));
  Tensor q = arena.allocate(Shape{rows, D_});
  q_.forward(q, x);
  Tensor ctx = arena.allocate(Shape{rows, 1, D_});
  ops::attention_decode(ctx, capture, q, k, v, key_rows, key_counts, H_);
  out_.forward(out, ctx);
}

}  // namespace tt::nn
