#include "ops/attention_composed.h"

#include "backend/bf16_storage.h"

namespace tt::ops {
namespace {

using backend::Backend;
using backend::MatrixStrides;

// Operand rows b * T + t of stride ld, head h at column h * Dh.
MatrixStrides heads(int T, int64_t ld, int Dh) { return MatrixStrides{T * ld, Dh, ld}; }

// A dense [B, H, rows, cols] grid: scores [B, H, Tq, Tk], or q, k, v stored per head [B, H, T, Dh].
MatrixStrides dense(int H, int rows, int cols) {
  return MatrixStrides{int64_t{H} * rows * cols, int64_t{rows} * cols, cols};
}

// Elements from a heads operand's first to one past its last: B * T rows of stride ld, H * Dh used.
int64_t head_rows(int B, int T, int64_t ld, int H, int Dh) { return (int64_t{B} * T - 1) * ld + int64_t{H} * Dh; }

// Releases one of the caller's tokens, where the caller keeps any (kept is null outside training).
void release(const AttentionKept* kept, KeptBf16 AttentionKept::*which) {
  if (kept) (kept->*which).release();
}

}  // namespace

void composed_attention_forward(Backend& be, const backend::AttentionForwardArgs& a, float* dropped,
                                AttentionKept* kept) {
  const auto& z = a.z;
  const MatrixStrides ps = dense(z.H, z.Tq, z.Tk);
  const int64_t n_scores = int64_t{z.B} * z.H * z.Tq * z.Tk;
  // Each of q, k, v and the weights w feeds one product here and one in backward (forgotten there).
  if (kept) {
    kept->q = KeptBf16(be, a.q.data, head_rows(z.B, z.Tq, a.q.ld, z.H, z.Dh));
    kept->k = KeptBf16(be, a.k.data, head_rows(z.B, z.Tk, a.k.ld, z.H, z.Dh));
    kept->v = KeptBf16(be, a.v.data, head_rows(z.B, z.Tk, a.v.ld, z.H, z.Dh));
  }
  be.gemm_batched(false, true, z.B, z.H, z.Tq, z.Tk, z.Dh, 1.0f, a.q.data, heads(z.Tq, a.q.ld, z.Dh), a.k.data,
                  heads(z.Tk, a.k.ld, z.Dh), 0.0f, a.probs, ps);
  // w is kept before the kernel that produces it (softmax, or dropout) so that the kernel may write its copy.
  const float* w = a.p > 0 ? dropped : a.probs;
  if (kept) kept->w = KeptBf16(be, w, n_scores);
  be.attention_softmax_forward(a.probs, a.key_lengths, z.B, z.H, z.Tq, z.Tk, a.scale, a.causal, 0);
  if (a.p > 0) be.dropout_forward(dropped, a.probs, n_scores, a.p, a.key);
  be.gemm_batched(false, false, z.B, z.H, z.Tq, z.Dh, z.Tk, 1.0f, w, ps, a.v.data, heads(z.Tk, a.v.ld, z.Dh), 0.0f,
                  a.ctx.data, heads(z.Tq, a.ctx.ld, z.Dh));
}

void composed_attention_backward(Backend& be, const backend::AttentionBackwardArgs& a, float* dprobs,
                                 const float* dropped, const AttentionKept* kept) {
  const auto& z = a.z;
  const MatrixStrides ps = dense(z.H, z.Tq, z.Tk), dcs = heads(z.Tq, a.dctx.ld, z.Dh);
  const MatrixStrides qs = heads(z.Tq, a.q.ld, z.Dh), ks = heads(z.Tk, a.k.ld, z.Dh), vs = heads(z.Tk, a.v.ld, z.Dh);
  const float* w = a.p > 0 ? dropped : a.probs;
  const int64_t n_scores = int64_t{z.B} * z.H * z.Tq * z.Tk;
  const KeptBf16 dctx_kept(be, a.dctx.data, head_rows(z.B, z.Tq, a.dctx.ld, z.H, z.Dh));
  // dW = dctx V^T ; dV = W^T dctx
  be.gemm_batched(false, true, z.B, z.H, z.Tq, z.Tk, z.Dh, 1.0f, a.dctx.data, dcs, a.v.data, vs, 0.0f, dprobs, ps);
  be.gemm_batched(true, false, z.B, z.H, z.Tk, z.Dh, z.Tq, 1.0f, w, ps, a.dctx.data, dcs, 0.0f, a.dv.data,
                  heads(z.Tk, a.dv.ld, z.Dh));
  dctx_kept.release();
  release(kept, &AttentionKept::w);
  release(kept, &AttentionKept::v);
  if (a.p > 0) be.dropout_backward(dprobs, dprobs, n_scores, a.p, a.key);
  const KeptBf16 dprobs_kept(be, dprobs, n_scores);  // before its producer, as w
  be.attention_softmax_backward(dprobs, a.probs, z.B, z.H, z.Tq, z.Tk, a.scale);
  // dQ = dS K ; dK = dS^T Q
  be.gemm_batched(false, false, z.B, z.H, z.Tq, z.Dh, z.Tk, 1.0f, dprobs, ps, a.k.data, ks, 0.0f, a.dq.data,
                  heads(z.Tq, a.dq.ld, z.Dh));
  be.gemm_batched(true, false, z.B, z.H, z.Tk, z.Dh, z.Tq, 1.0f, dprobs, ps, a.q.data, qs, 0.0f, a.dk.data,
                  heads(z.Tk, a.dk.ld, z.Dh));
  dprobs_kept.release();
  release(kept, &AttentionKept::k);
  release(kept, &AttentionKept::q);
}

void composed_attention_forward_bf16(Backend& be, const backend::AttentionForwardArgs& a, StoredHeads s,
                                     uint16_t* dropped16, AttentionKept* kept) {
  backend::Bf16Storage& st = backend::bf16_storage_of(be, "attention_forward_bf16");
  const auto& z = a.z;
  const MatrixStrides ps = dense(z.H, z.Tq, z.Tk), qs = dense(z.H, z.Tq, z.Dh), ks = dense(z.H, z.Tk, z.Dh),
                      cs = heads(z.Tq, a.ctx.ld, z.Dh);
  const int64_t n_scores = int64_t{z.B} * z.H * z.Tq * z.Tk;
  st.gemm_batched_bf16_operand(false, true, z.B, z.H, z.Tq, z.Tk, z.Dh, 1.0f, s.q, qs, true, s.k, ks, true, 0.0f,
                               a.probs, ps);
  if (a.p > 0) {
    be.attention_softmax_forward(a.probs, a.key_lengths, z.B, z.H, z.Tq, z.Tk, a.scale, a.causal, 0);
    st.dropout_forward_bf16(dropped16, a.probs, n_scores, a.p, a.key);
    st.gemm_batched_bf16_operand(false, false, z.B, z.H, z.Tq, z.Dh, z.Tk, 1.0f, dropped16, ps, true, s.v, ks, true,
                                 0.0f, a.ctx.data, cs);
    return;
  }
  // The probabilities are kept before softmax produces them (it writes their copy); w v here and
  // dV = w^T dctx in backward read it.
  if (kept) kept->w = KeptBf16(be, a.probs, n_scores);
  be.attention_softmax_forward(a.probs, a.key_lengths, z.B, z.H, z.Tq, z.Tk, a.scale, a.causal, 0);
  st.gemm_batched_bf16_operand(false, false, z.B, z.H, z.Tq, z.Dh, z.Tk, 1.0f, a.probs, ps, false, s.v, ks, true,
                               0.0f, a.ctx.data, cs);
}

void composed_attention_backward_bf16(Backend& be, const backend::AttentionBackwardArgs& a, StoredHeads s,
                                      float* dprobs, const uint16_t* dropped16, const AttentionKept* kept) {
  backend::Bf16Storage& st = backend::bf16_storage_of(be, "attention_backward_bf16");
  const auto& z = a.z;
  const MatrixStrides ps = dense(z.H, z.Tq, z.Tk), qs = dense(z.H, z.Tq, z.Dh), ks = dense(z.H, z.Tk, z.Dh),
                      dcs = heads(z.Tq, a.dctx.ld, z.Dh);
  const int64_t n_scores = int64_t{z.B} * z.H * z.Tq * z.Tk;
  const KeptBf16 dctx_kept(be, a.dctx.data, head_rows(z.B, z.Tq, a.dctx.ld, z.H, z.Dh));
  // dW = dctx V^T ; dV = W^T dctx
  st.gemm_batched_bf16_operand(false, true, z.B, z.H, z.Tq, z.Tk, z.Dh, 1.0f, a.dctx.data, dcs, false, s.v, ks, true,
                               0.0f, dprobs, ps);
  const bool stored = a.p > 0;
  st.gemm_batched_bf16_operand(true, false, z.B, z.H, z.Tk, z.Dh, z.Tq, 1.0f,
                               stored ? static_cast<const void*>(dropped16) : a.probs, ps, stored, a.dctx.data, dcs,
                               false, 0.0f, a.dv.data, heads(z.Tk, a.dv.ld, z.Dh));
  dctx_kept.release();
  release(kept, &AttentionKept::w);  // the probabilities (p == 0; nothing was kept otherwise)
  if (stored) be.dropout_backward(dprobs, dprobs, n_scores, a.p, a.key);
  const KeptBf16 dprobs_kept(be, dprobs, n_scores);  // before its producer, as the probabilities
  be.attention_softmax_backward(dprobs, a.probs, z.B, z.H, z.Tq, z.Tk, a.scale);
  // dQ = dS K ; dK = dS^T Q
  st.gemm_batched_bf16_operand(false, false, z.B, z.H, z.Tq, z.Dh, z.Tk, 1.0f, dprobs, ps, false, s.k, ks, true, 0.0f,
                               a.dq.data, heads(z.Tq, a.dq.ld, z.Dh));
  st.gemm_batched_bf16_operand(true, false, z.B, z.H, z.Tk, z.Dh, z.Tq, 1.0f, dprobs, ps, false, s.q, qs, true, 0.0f,
                               a.dk.data, heads(z.Tk, a.dk.ld, z.Dh));
  dprobs_kept.release();
}

}  // namespace tt::ops
