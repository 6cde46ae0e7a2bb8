#include "ops/copy.h"

#include <string>

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

}  // namespace tt::ops
