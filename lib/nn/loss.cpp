#include "nn/loss.h"

#include "ops/cross_entropy.h"
#include "ops/matmul.h"

namespace tt::nn {

void output_projection_forward(const tensor::Tensor& logits, const tensor::Tensor& hidden, const tensor::Tensor& table,
                               const tensor::Tensor& bias) {
  const int64_t D = table.dim(1);
  const tensor::Tensor h = hidden.reshape(tensor::Shape{hidden.numel() / D, D});
  if (bias.defined()) ops::linear_forward(logits, h, table, bias);
  else ops::matmul(logits, h, false, table, true);
}

void output_projection_backward(const tensor::Tensor& dhidden, const tensor::Tensor& dtable,
                                const tensor::Tensor& dbias, const tensor::Tensor& dlogits,
                                const tensor::Tensor& hidden, const tensor::Tensor& table) {
  const int64_t D = table.dim(1);
  const tensor::Tensor h = hidden.reshape(tensor::Shape{hidden.numel() / D, D});
  if (dbias.defined()) {
    ops::linear_backward(dhidden.reshape(h.shape()), dtable, dbias, dlogits, h, table);
  } else {
    ops::matmul(dtable, dlogits, true, h, false, 1.0f, 1.0f);
    ops::matmul(dhidden.reshape(h.shape()), dlogits, false, table, false);
  }
}

LossStats label_smoothed_loss(const tensor::Tensor& logits, const tensor::Tensor& targets,
                              const std::vector<int32_t>& host_targets, float label_smoothing, int32_t pad_id,
                              float grad_scale, tensor::Arena& arena) {
  const int64_t N = targets.numel();
  tensor::Tensor loss = arena.allocate(tensor::Shape{N});
  tensor::Tensor nll = arena.allocate(tensor::Shape{N});
  ops::cross_entropy_forward_backward(loss, nll, logits, targets, label_smoothing, pad_id, grad_scale);
  const std::vector<float> l = loss.to_host_f32(), n = nll.to_host_f32();
  LossStats stats;
  for (int64_t i = 0; i < N; ++i) {
    if (host_targets[static_cast<size_t>(i)] == pad_id) continue;
    stats.loss_sum += l[static_cast<size_t>(i)];
    stats.nll_sum += n[static_cast<size_t>(i)];
    ++stats.tokens;
  }
  return stats;
}

}  // namespace tt::nn
