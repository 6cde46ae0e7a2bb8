// Host values into existing device tensors (lengths, reorder indices, initial weights); sizes must match.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace tt::ops {

void upload(const tensor::Tensor& dst, const std::vector<int32_t>& values);
void upload(const tensor::Tensor& dst, const std::vector<float>& values);

}  // namespace tt::ops
