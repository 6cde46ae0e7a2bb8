// Attention composed from a backend's primitives (batched products, the softmax and dropout kernels), with
// the semantics of Backend::attention_forward / attention_backward. ops/attention.cpp runs it where the
// backend has no fused kernel in its current modes (Backend::fuses), and always when q, k, v
// are stored in bf16; tests compare the fused kernels with it.
#pragma once

#include <cstdint>

#include "backend/backend.h"
#include "ops/kept_bf16.h"

namespace tt::ops {

// What a training forward keeps in bf16 for its backward: q, k, v and the weights w (after dropout). Each
// feeds one product in forward and one in backward, which releases it after that reader. Empty where
// nothing was kept (the fused kernel, or no saved state).
struct AttentionKept {
  KeptBf16 q, k, v, w;
};

// fp32 operands: `dropped` [B, H, Tq, Tk] receives the weights after dropout (p > 0; else unused, may be
// null) and backward reads them; dprobs [B, H, Tq, Tk] is backward's scratch. a.flags is not used.
// `kept` (may be null: keep nothing) receives what forward keeps and backward releases.
void composed_attention_forward(backend::Backend& be, const backend::AttentionForwardArgs& a, float* dropped,
                                AttentionKept* kept = nullptr);
void composed_attention_backward(backend::Backend& be, const backend::AttentionBackwardArgs& a, float* dprobs,
                                 const float* dropped, const AttentionKept* kept = nullptr);

// q, k, v stored in bf16, dense [B, H, T, Dh] (Backend::bf16_storage), read as stored by
// gemm_batched_bf16_operand: the same bits as the fp32 pair on the values that round to them. The weights
// after dropout exist in bf16 alone (dropped16, p > 0). a.q, a.k, a.v and a.flags are not used.
struct StoredHeads {
  const uint16_t* q = nullptr;
  const uint16_t* k = nullptr;
  const uint16_t* v = nullptr;
};
void composed_attention_forward_bf16(backend::Backend& be, const backend::AttentionForwardArgs& a, StoredHeads s,
                                     uint16_t* dropped16, AttentionKept* kept = nullptr);
void composed_attention_backward_bf16(backend::Backend& be, const backend::AttentionBackwardArgs& a, StoredHeads s,
                                      float* dprobs, const uint16_t* dropped16,
                                      const AttentionKept* kept = nullptr);

}  // namespace tt::ops
