#include "ops/attention.h"

#include <string>

#include "backend/bf16_storage.h"
#include "ops/attention_composed.h"
#include "util/check.h"

namespace tt::ops {

namespace {

using backend::Backend;
using backend::MatrixStrides;

// The operand holds every element it addresses: the last row's last head ends inside the tensor.
void check_rows(const HeadRows& x, int B, int T, const AttentionSizes& z, const char* what) {
  const int64_t width = int64_t{z.H} * z.Dh;
  TT_CHECK_MSG(x.t.defined() && x.ld >= width && (int64_t{B} * T - 1) * x.ld + width <= x.t.numel(),
               std::string("attention ") + what + ": " + (x.t.defined() ? x.t.shape().str() : "undefined") +
                   " with row stride " + std::to_string(x.ld) + " for " + std::to_string(B) + " x " +
                   std::to_string(T) + " rows of " + std::to_string(width));
}

void check_scores(const tensor::Tensor& s, const AttentionSizes& z, const char* what) {
  TT_CHECK_MSG(s.defined() && s.numel() == int64_t{z.B} * z.H * z.Tq * z.Tk,
               std::string("attention ") + what + " must hold [B, H, Tq, Tk] = " + std::to_string(z.B) + " x " +
                   std::to_string(z.H) + " x " + std::to_string(z.Tq) + " x " + std::to_string(z.Tk));
}

// A dense bf16 [B, H, T, Dh] tensor.
void check_heads16(const tensor::Tensor& x, int B, int T, const AttentionSizes& z, const char* what) {
  TT_CHECK_MSG(x.defined() && x.dtype() == tensor::DType::bf16 && x.numel() == int64_t{B} * z.H * T * z.Dh,
               std::string("attention ") + what + " must be bf16 [B, H, T, Dh] = " + std::to_string(B) + " x " +
                   std::to_string(z.H) + " x " + std::to_string(T) + " x " + std::to_string(z.Dh));
}

// The checks both forwards make besides q, k, v; false when there is nothing to compute.
bool check_forward(const HeadRows& ctx, const tensor::Tensor& probs, const tensor::Tensor& dropped,
                   const tensor::Tensor& key_lengths, const AttentionSizes& z, float p) {
  if (z.B == 0 || z.H == 0 || z.Tq == 0) return false;
  TT_CHECK(z.Tk > 0 && z.Dh > 0);
  check_rows(ctx, z.B, z.Tq, z, "ctx");
  check_scores(probs, z, "probs");
  if (p > 0) check_scores(dropped, z, "dropped weights");
  if (key_lengths.defined()) TT_CHECK(key_lengths.numel() >= z.B);
  return true;
}

// The same for both backwards.
bool check_backward(const HeadRows& dq, const HeadRows& dk, const HeadRows& dv, const tensor::Tensor& dprobs,
                    const HeadRows& dctx, const tensor::Tensor& probs, const tensor::Tensor& dropped,
                    const AttentionSizes& z, float p) {
  if (z.B == 0 || z.H == 0 || z.Tq == 0) return false;
  TT_CHECK(z.Tk > 0 && z.Dh > 0);
  check_rows(dq, z.B, z.Tq, z, "dq");
  check_rows(dk, z.B, z.Tk, z, "dk");
  check_rows(dv, z.B, z.Tk, z, "dv");
  check_rows(dctx, z.B, z.Tq, z, "dctx");
  check_scores(probs, z, "probs");
  check_scores(dprobs, z, "dprobs");
  if (p > 0) check_scores(dropped, z, "dropped weights");
  return true;
}

backend::HeadsIn in(const HeadRows& x) { return {x.t.f32(), x.ld}; }
backend::HeadsOut out(const HeadRows& x) { return {x.t.f32(), x.ld}; }

// The arguments both forwards (and both backwards) fill alike; q, k, v are the caller's.
backend::AttentionForwardArgs forward_args(const HeadRows& ctx, const tensor::Tensor& probs,
                                           const tensor::Tensor& key_lengths, AttentionSizes z, float scale,
                                           bool causal, float p, backend::DropoutKey key) {
  backend::AttentionForwardArgs a;
  a.z = z, a.scale = scale, a.causal = causal, a.p = p, a.key = key;
  a.ctx = out(ctx), a.probs = probs.f32();
  a.key_lengths = key_lengths.defined() ? key_lengths.i32() : nullptr;
  return a;
}

backend::AttentionBackwardArgs backward_args(const HeadRows& dq, const HeadRows& dk, const HeadRows& dv,
                                             const HeadRows& dctx, const tensor::Tensor& probs, AttentionSizes z,
                                             float scale, float p, backend::DropoutKey key) {
  backend::AttentionBackwardArgs a;
  a.z = z, a.scale = scale, a.p = p, a.key = key;
  a.dq = out(dq), a.dk = out(dk), a.dv = out(dv), a.dctx = in(dctx), a.probs = probs.f32();
  return a;
}

}  // namespace

tensor::DType attention_dropout_dtype(const Backend& be, bool bf16_stored) {
  if (be.fuses(backend::Backend::Fused::attention) && !bf16_stored) return tensor::DType::u8;
  return bf16_stored ? tensor::DType::bf16 : tensor::DType::f32;
}

void round_heads_to_bf16(const tensor::Tensor& y16, const HeadRows& x, int B, int T, int H, int Dh,
                         const tensor::Tensor& bias) {
  const AttentionSizes z{B, H, T, T, Dh};
  if (int64_t{B} * T * H * Dh == 0) return;
  check_rows(x, B, T, z, "projection");
  check_heads16(y16, B, T, z, "stored projection");
  TT_CHECK_MSG(!bias.defined() || bias.numel() == int64_t{H} * Dh,
               "projection bias " + (bias.defined() ? bias.shape().str() : std::string()) + " for " +
                   std::to_string(H) + " heads of " + std::to_string(Dh));
  backend::bf16_storage_of(x.t.backend(), "round_heads_to_bf16")
      .round_to_bf16(y16.bf16(), x.t.f32(), bias.defined() ? bias.f32() : nullptr, B, H, T, Dh,
                     MatrixStrides{T * x.ld, Dh, x.ld});
}

// With q, k, v stored in bf16 the products read them as stored: always composed (attention_composed.h).
void attention_forward_bf16(const HeadRows& ctx, const tensor::Tensor& probs, const tensor::Tensor& dropped,
                            const tensor::Tensor& q16, const tensor::Tensor& k16, const tensor::Tensor& v16,
                            const tensor::Tensor& key_lengths, AttentionSizes z, float scale, bool causal, float p,
                            backend::DropoutKey key, AttentionKept* kept) {
  if (!check_forward(ctx, probs, dropped, key_lengths, z, p)) return;
  check_heads16(q16, z.B, z.Tq, z, "q");
  check_heads16(k16, z.B, z.Tk, z, "k");
  check_heads16(v16, z.B, z.Tk, z, "v");
  const backend::AttentionForwardArgs a = forward_args(ctx, probs, key_lengths, z, scale, causal, p, key);
  composed_attention_forward_bf16(probs.backend(), a, StoredHeads{q16.bf16(), k16.bf16(), v16.bf16()},
                                  p > 0 ? dropped.bf16() : nullptr, kept);
}

void attention_backward_bf16(const HeadRows& dq, const HeadRows& dk, const HeadRows& dv, const tensor::Tensor& dprobs,
                             const HeadRows& dctx, const tensor::Tensor& probs, const tensor::Tensor& dropped,
                             const tensor::Tensor& q16, const tensor::Tensor& k16, const tensor::Tensor& v16,
                             AttentionSizes z, float scale, float p, backend::DropoutKey key,
                             const AttentionKept* kept) {
  if (!check_backward(dq, dk, dv, dprobs, dctx, probs, dropped, z, p)) return;
  check_heads16(q16, z.B, z.Tq, z, "q");
  check_heads16(k16, z.B, z.Tk, z, "k");
  check_heads16(v16, z.B, z.Tk, z, "v");
  const backend::AttentionBackwardArgs a = backward_args(dq, dk, dv, dctx, probs, z, scale, p, key);
  composed_attention_backward_bf16(probs.backend(), a, StoredHeads{q16.bf16(), k16.bf16(), v16.bf16()}, dprobs.f32(),
                                   p > 0 ? dropped.bf16() : nullptr, kept);
}

void attention_forward(const HeadRows& ctx, const tensor::Tensor& probs, const tensor::Tensor& dropped,
                       const HeadRows& q, const HeadRows& k, const HeadRows& v, const tensor::Tensor& key_lengths,
                       AttentionSizes z, float scale, bool causal, float p, backend::DropoutKey key,
                       AttentionKept* kept) {
  if (!check_forward(ctx, probs, dropped, key_lengths, z, p)) return;
  check_rows(q, z.B, z.Tq, z, "q");
  check_rows(k, z.B, z.Tk, z, "k");
  check_rows(v, z.B, z.Tk, z, "v");
  backend::AttentionForwardArgs a = forward_args(ctx, probs, key_lengths, z, scale, causal, p, key);
  a.q = in(q), a.k = in(k), a.v = in(v);
  Backend& be = probs.backend();
  if (be.fuses(backend::Backend::Fused::attention)) {
    a.flags = p > 0 ? dropped.u8() : nullptr;
    be.attention_forward(a);
  } else {
    composed_attention_forward(be, a, p > 0 ? dropped.f32() : nullptr, kept);
  }
}

void attention_backward(const HeadRows& dq, const HeadRows& dk, const HeadRows& dv, const tensor::Tensor& dprobs,
                        const HeadRows& dctx, const tensor::Tensor& probs, const tensor::Tensor& dropped,
                        const HeadRows& q, const HeadRows& k, const HeadRows& v, AttentionSizes z, float scale, float p,
                        backend::DropoutKey key, const AttentionKept* kept) {
  if (!check_backward(dq, dk, dv, dprobs, dctx, probs, dropped, z, p)) return;
  check_rows(q, z.B, z.Tq, z, "q");
  check_rows(k, z.B, z.Tk, z, "k");
  check_rows(v, z.B, z.Tk, z, "v");
  backend::AttentionBackwardArgs a = backward_args(dq, dk, dv, dctx, probs, z, scale, p, key);
  a.q = in(q), a.k = in(k), a.v = in(v);
  Backend& be = probs.backend();
  if (be.fuses(backend::Backend::Fused::attention)) {
    a.flags = p > 0 ? dropped.u8() : nullptr;
    be.attention_backward(a);
  } else {
    composed_attention_backward(be, a, dprobs.f32(), p > 0 ? dropped.f32() : nullptr, kept);
  }
}

}  // namespace tt::ops
