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

void upload_at(const tensor::Tensor& x, const std::vector<int64_t>& at, const std::vector<float>& values,
               tensor::Arena& scratch) {
  TT_CHECK_MSG(at.size() == values.size(),
               "upload_at: " + std::to_string(values.size()) + " values for " + std::to_string(at.size()) + " offsets");
  const int64_t n = static_cast<int64_t>(at.size());
  if (n == 0) return;
  for (int64_t a : at)
    TT_CHECK_MSG(a >= 0 && a < x.numel(), "upload_at: offset " + std::to_string(a) + " outside " + x.shape().str());
  tensor::Tensor index = scratch.allocate(tensor::Shape{n}, tensor::DType::i32);
  tensor::Tensor given = scratch.allocate(tensor::Shape{n, 1});
  upload(index, std::vector<int32_t>(at.begin(), at.end()));
  upload(given, values);
  x.backend().scatter_rows(x.f32(), given.f32(), index.i32(), n, 1);
}

std::vector<float> download_columns(const tensor::Tensor& x, const std::vector<int32_t>& columns,
                                    tensor::Arena& scratch) {
  const int64_t rows = x.dim(0), V = x.dim(1);
  std::vector<int64_t> at(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) at[static_cast<size_t>(r)] = r * V + columns[static_cast<size_t>(r)];
  return download_at(x, at, scratch);
}

}  // namespace tt::ops
