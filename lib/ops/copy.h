// Host values into existing device tensors (lengths, reorder indices, initial weights; sizes must match),
// a few device values back to the host (the search's picks out of [rows, V] scores) and a few host values
// into a device tensor (penalised or estimated scores), each in one transfer and one kernel.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/arena.h"
#include "tensor/tensor.h"

namespace tt::ops {

void upload(const tensor::Tensor& dst, const std::vector<int32_t>& values);
void upload(const tensor::Tensor& dst, const std::vector<float>& values);

// The f32 elements of x at flat (row-major) offsets `at` (each below 2^31), on the host, in one gather on
// x's device (index and result from `scratch`).
std::vector<float> download_at(const tensor::Tensor& x, const std::vector<int64_t>& at, tensor::Arena& scratch);
// x's f32 elements at the distinct flat offsets `at` (each below 2^31) = values (index and values staged
// in `scratch`).
void upload_at(const tensor::Tensor& x, const std::vector<int64_t>& at, const std::vector<float>& values,
               tensor::Arena& scratch);
// x[r, columns[r]] for each row r of x [rows, V], on the host.
std::vector<float> download_columns(const tensor::Tensor& x, const std::vector<int32_t>& columns,
                                    tensor::Arena& scratch);

}  // namespace tt::ops
