// Front ends of the decoding kernels (backend.h, "decoding"): attention of one query per row over
// row-addressed cached keys, and per-row top-k (of values or of log-probabilities from logits).
#pragma once

#include "tensor/tensor.h"

namespace tt::ops {

// ctx [rows, D] = per-head attention of q [rows, D] over rows of k and v (any [N, D] tensors): key j of row
// r is row key_rows[r, j] for j < key_counts[r]. key_rows [rows, max_keys] i32, key_counts [rows] i32.
// probs: undefined, or [rows, H, 1, max_keys] receiving the weights (0 past a row's count).
void attention_decode(const tensor::Tensor& ctx, const tensor::Tensor& probs, const tensor::Tensor& q,
                      const tensor::Tensor& k, const tensor::Tensor& v, const tensor::Tensor& key_rows,
                      const tensor::Tensor& key_counts, int H);

// values [rows, k] f32 and indices [rows, k] i32: the k largest of each row of x [rows, V], best first.
void topk(const tensor::Tensor& values, const tensor::Tensor& indices, const tensor::Tensor& x);
// The same over each row's log-softmax, from logits x [rows, V], fused: shift [rows] f32 receives each
// row's max + log(sum exp(x - max)) (column c's log-probability is x[r, c] - shift[r]). x may be
// overwritten (with its log-softmax, shift 0, where the backend does not fuse this: composed below).
void log_softmax_topk(const tensor::Tensor& values, const tensor::Tensor& indices, const tensor::Tensor& shift,
                      const tensor::Tensor& x);
// log_softmax in place, then topk, shift 0: for a backend that does not fuse them (Backend::fuses).
void composed_log_softmax_topk(backend::Backend& be, float* values, int32_t* indices, float* shift, float* x,
                               int64_t rows, int V, int k);

}  // namespace tt::ops
