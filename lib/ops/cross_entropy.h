// Label-smoothed cross-entropy fused with its gradient (one pass over the [N, V] logits), and row gathers.
#pragma once

#include <cstdint>

#include "tensor/tensor.h"

namespace tt::ops {

// loss[N], nll[N] per row (0 where targets == ignore_id); logits [N, V] are replaced by the gradient of
// grad_scale · sum(loss). targets [N] i32.
void cross_entropy_forward_backward(const tensor::Tensor& loss, const tensor::Tensor& nll,
                                    const tensor::Tensor& logits, const tensor::Tensor& targets, float eps,
                                    int32_t ignore_id, float grad_scale);

// dst[i, :] = src[index[i], :]; src/dst viewed as rows of `cols` elements, index [n] i32.
void gather_rows(const tensor::Tensor& dst, const tensor::Tensor& src, const tensor::Tensor& index, int64_t n,
                 int64_t cols);

}  // namespace tt::ops
