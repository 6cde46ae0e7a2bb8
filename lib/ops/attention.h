// Scaled dot-product attention on the projections as the Linear layers leave them (backend.h,
// attention_forward / attention_backward): the backend's fused kernel where it has one in its current
// modes, else composed here from its batched products, softmax and dropout kernels.
#pragma once

#include "backend/backend.h"
#include "ops/attention_composed.h"
#include "tensor/tensor.h"

namespace tt::ops {

// Rows (b, t) of B sentences of T rows each, H heads of Dh columns per row, row stride ld: element
// (b, t, h, j) at t.f32()[(b * T + t) * ld + h * Dh + j]. The tensor starts at the operand's first element.
struct HeadRows {
  tensor::Tensor t;
  int64_t ld = 0;
};

using backend::AttentionSizes;

// The element type of `dropped`, the room a forward with dropout (p > 0) keeps for its backward, on `be` in
// its current modes: the fused kernel's dropout flags (u8) where it has one (Backend::fuses),
// else the composed path's weights after dropout: f32, or bf16 when q, k, v are stored in bf16.
tensor::DType attention_dropout_dtype(const backend::Backend& be, bool bf16_stored);

// ctx = dropout(softmax(mask(scale q k^T))) v per head; probs [B, H, Tq, Tk] kept for backward, dropped the
// same shape, of attention_dropout_dtype (p > 0; may be undefined when p == 0). key_lengths [B] i32 or undefined.
void attention_forward(const HeadRows& ctx, const tensor::Tensor& probs, const tensor::Tensor& dropped,
                       const HeadRows& q, const HeadRows& k, const HeadRows& v, const tensor::Tensor& key_lengths,
                       AttentionSizes z, float scale, bool causal, float p, backend::DropoutKey key,
                       AttentionKept* kept = nullptr);
// dq, dk, dv assigned; dprobs: scratch of probs' shape. `kept`: what forward kept, released here.
void attention_backward(const HeadRows& dq, const HeadRows& dk, const HeadRows& dv, const tensor::Tensor& dprobs,
                        const HeadRows& dctx, const tensor::Tensor& probs, const tensor::Tensor& dropped,
                        const HeadRows& q, const HeadRows& k, const HeadRows& v, AttentionSizes z, float scale, float p,
                        backend::DropoutKey key, const AttentionKept* kept = nullptr);

// bf16 storage (Backend::bf16_storage): x's B x T rows of H heads rounded into y16, a dense bf16 [B, H, T, Dh]
// tensor, and the attention pair reading q16, k16, v16 so stored, with `dropped` bf16 too (the bits of the
// pair above on x). bias (undefined: none; else [H * Dh]): the projection's bias, added to x in the same pass.
void round_heads_to_bf16(const tensor::Tensor& y16, const HeadRows& x, int B, int T, int H, int Dh,
                         const tensor::Tensor& bias);
void attention_forward_bf16(const HeadRows& ctx, const tensor::Tensor& probs, const tensor::Tensor& dropped,
                            const tensor::Tensor& q16, const tensor::Tensor& k16, const tensor::Tensor& v16,
                            const tensor::Tensor& key_lengths, AttentionSizes z, float scale, bool causal, float p,
                            backend::DropoutKey key, AttentionKept* kept = nullptr);
void attention_backward_bf16(const HeadRows& dq, const HeadRows& dk, const HeadRows& dv, const tensor::Tensor& dprobs,
                             const HeadRows& dctx, const tensor::Tensor& probs, const tensor::Tensor& dropped,
                             const tensor::Tensor& q16, const tensor::Tensor& k16, const tensor::Tensor& v16,
                             AttentionSizes z, float scale, float p, backend::DropoutKey key,
                             const AttentionKept* kept = nullptr);

}  // namespace tt::ops
