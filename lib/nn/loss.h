// The tied output projection and the label-smoothed cross-entropy (§5.4) over it.
//   hidden [N, D], table [V, D] (the target embedding), logits [N, V], targets [N] i32 (pad = ignored).
// The loss kernel fuses softmax, loss, NLL and gradient in one pass over the logits, writing the gradient in
// place of the logits.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"
#include "tensor/arena.h"

namespace tt::nn {

// Sums over the non-pad target tokens of a batch.
struct LossStats {
  double loss_sum = 0;  // label-smoothed cross-entropy
  double nll_sum = 0;   // plain -log p(target), for perplexity
  int64_t tokens = 0;
};

// logits = hidden · table^T (+ bias [V] where defined). A training step keeps hidden (ops::KeptBf16) for
// backward's dtable product.
void output_projection_forward(const tensor::Tensor& logits, const tensor::Tensor& hidden, const tensor::Tensor& table,
                               const tensor::Tensor& bias);
// dhidden = dlogits · table (assigned); dtable += dlogits^T · hidden (dbias += column sums of dlogits where
// defined). In bf16 the caller keeps dlogits (from before the loss kernel, which then writes its copy) so
// both products read one.
void output_projection_backward(const tensor::Tensor& dhidden, const tensor::Tensor& dtable,
                                const tensor::Tensor& dbias, const tensor::Tensor& dlogits,
                                const tensor::Tensor& hidden, const tensor::Tensor& table);

// Sums loss and NLL over the rows whose target is not pad_id (summed on the host in double, in row order, so
// the result does not depend on thread count). logits are replaced by d(grad_scale · loss_sum)/d logits.
LossStats label_smoothed_loss(const tensor::Tensor& logits, const tensor::Tensor& targets,
                              const std::vector<int32_t>& host_targets, float label_smoothing, int32_t pad_id,
                              float grad_scale, tensor::Arena& arena);

}  // namespace tt::nn
