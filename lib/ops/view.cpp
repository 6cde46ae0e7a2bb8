#include "ops/view.h"

#include "util/check.h"

namespace tt::ops {

tensor::Tensor view(const tensor::Tensor& t, int64_t offset, tensor::Shape shape) {
  TT_CHECK_MSG(offset >= 0 && offset + shape.numel() <= t.numel(),
               "view " + shape.str() + " at " + std::to_string(offset) + " of " + t.shape().str());
  return t.reshape(tensor::Shape{t.numel()}).slice_rows(offset, shape.numel()).reshape(shape);
}

tensor::Tensor tail(const tensor::Tensor& t, int64_t offset) {
  return view(t, offset, tensor::Shape{t.numel() - offset});
}

}  // namespace tt::ops
