// Views into a tensor's storage at an element offset (q/k/v inside one fused projection, one step of a KV
// cache). Views share storage; nothing is copied.
#pragma once

#include <cstdint>

#include "tensor/tensor.h"

namespace tt::ops {

// The `shape.numel()` elements of t starting `offset` elements in, as a tensor of `shape`.
tensor::Tensor view(const tensor::Tensor& t, int64_t offset, tensor::Shape shape);
// Everything from `offset` to the end of t, flat (for strided batched-matmul operands).
tensor::Tensor tail(const tensor::Tensor& t, int64_t offset);

}  // namespace tt::ops
