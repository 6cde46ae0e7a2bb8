#include "ops/copy.h"

#include <string>

#include "ops/cross_entropy.h"
#include "util/check.h"

namespace tt::ops {

void upload(const tensor::Tensor& dst, const std::vector<int32_t>& values) {
  TT_CHECK_MSG(static_cast<int64_t>(values.size()) == dst.numel(),
               "upload of " + std::to_string(values.size()) + " values into " + dst.shape().str());
  if (!values.empty()) dst.backend().copy_from_host(dst.i32(), values.data(), dst.bytes());
}

void upload(const tensor::Tensor& dst, const std::vector<float>& values) {
  TT_CHECK_MSG(static_cast<int64_t>(values.size()) == dst.numel(),
               "upload of " + std::to_string(values.size()) + " values into " + dst.shape().str());
  if (!values.empty()) dst.backend().copy_from_host(dst.f32(), values.data(), dst.bytes());
}

std::vector<float> download_at(const tensor::Tensor& x, const std::vector<int64_t>& at, tensor::Arena& scratch) {
  const int64_t n = static_cast<int64_t>(at.size());
  if (n == 0) return {};
  const std::vector<int32_t> index32(at.begin(), at.end());  // the gather kernels index in int32
  tensor::Tensor index = scratch.allocate(tensor::Shape{n}, tensor::DType::i32);
  tensor::Tensor picked = scratch.allocate(tensor::Shape{n, 1});
  upload(index, index32);
  gather_rows(picked, x.reshape(tensor::Shape{x.numel(), 1}), index, n, 1);
  return picked.to_host_f32();
}

std::vector<float> download_columns(const tensor::Tensor& x, const std::vector<int32_t>& columns,
                                    tensor::Arena& scratch) {
  const int64_t rows = x.dim(0), V = x.dim(1);
  std::vector<int64_t> at(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) at[static_cast<size_t>(r)] = r * V + columns[static_cast<size_t>(r)];
  return download_at(x, at, scratch);
}

}  // namespace tt::ops
