// Masked attention softmax over scores [B, H, Tq, Tk], and row log-softmax for decoding.
#pragma once

#include "tensor/tensor.h"

namespace tt::ops {

// In place: s = softmax(scale · s + mask) along Tk. key_lengths [B] i32 (undefined: no padding) masks keys
// k >= key_lengths[b]; causal masks k > q + query_offset. Masked weights are exactly 0.
void attention_softmax_forward(const tensor::Tensor& scores, const tensor::Tensor& key_lengths, float scale,
                               bool causal, int query_offset = 0);
// In place: grad holds dP on entry and d(raw scores) on exit (includes `scale`).
void attention_softmax_backward(const tensor::Tensor& grad, const tensor::Tensor& probs, float scale);
// In place over the rows of x [N, V].
void log_softmax(const tensor::Tensor& x);

}  // namespace tt::ops
