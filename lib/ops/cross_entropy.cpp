#include "ops/cross_entropy.h"

#include "util/check.h"

namespace tt::ops {

void cross_entropy_forward_backward(const tensor::Tensor& loss, const tensor::Tensor& nll,
                                    const tensor::Tensor& logits, const tensor::Tensor& targets, float eps,
                                    int32_t ignore_id, float grad_scale) {
  const int V = static_cast<int>(logits.dim(logits.shape().rank() - 1));
  const int64_t N = logits.numel() / V;
  TT_CHECK_MSG(targets.numel() == N && loss.numel() >= N && nll.numel() >= N,
               "cross_entropy: logits " + logits.shape().str() + ", targets " + targets.shape().str());
  logits.backend().cross_entropy_forward_backward(loss.f32(), nll.f32(), logits.f32(), targets.i32(), N, V, eps,
                                                  ignore_id, grad_scale);
}

void gather_rows(const tensor::Tensor& dst, const tensor::Tensor& src, const tensor::Tensor& index, int64_t n,
                 int64_t cols) {
  TT_CHECK(index.numel() >= n && dst.numel() >= n * cols);
  if (n == 0) return;
  dst.backend().gather_rows(dst.f32(), src.f32(), index.i32(), n, cols);
}

}  // namespace tt::ops
