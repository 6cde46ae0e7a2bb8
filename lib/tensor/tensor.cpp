#include "tensor/tensor.h"

#include "util/check.h"

namespace tt::tensor {

Tensor Tensor::empty(backend::Backend& backend, Shape shape, DType dtype) {
  size_t bytes = static_cast<size_t>(shape.numel()) * dtype_size(dtype);
  return Tensor(std::make_shared<Buffer>(backend, bytes), 0, shape, dtype);
}

Tensor Tensor::zeros(backend::Backend& backend, Shape shape, DType dtype) {
  const size_t bytes = static_cast<size_t>(shape.numel()) * dtype_size(dtype);
  if (void* zeroed = bytes ? backend.allocate_zeroed(bytes) : nullptr)  // no pass over it: pages stay unbacked
    return Tensor(std::make_shared<Buffer>(backend, bytes, zeroed), 0, shape, dtype);
  Tensor t = empty(backend, shape, dtype);
  t.zero();
  return t;
}

Tensor Tensor::from_host(backend::Backend& backend, Shape shape, const std::vector<float>& values) {
  TT_CHECK(static_cast<int64_t>(values.size()) == shape.numel());
  Tensor t = empty(backend, shape, DType::f32);
  backend.copy_from_host(t.raw(), values.data(), t.bytes());
  return t;
}

Tensor Tensor::from_host(backend::Backend& backend, Shape shape, const std::vector<int32_t>& values) {
  TT_CHECK(static_cast<int64_t>(values.size()) == shape.numel());
  Tensor t = empty(backend, shape, DType::i32);
  backend.copy_from_host(t.raw(), values.data(), t.bytes());
  return t;
}

char* Tensor::raw() const {
  TT_CHECK_MSG(storage_, "undefined tensor");
  return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(dtype_size(dtype_));
}

float* Tensor::f32() const {
  TT_CHECK_MSG(dtype_ == DType::f32, "tensor is not f32");
  return reinterpret_cast<float*>(raw());
}

int32_t* Tensor::i32() const {
  TT_CHECK_MSG(dtype_ == DType::i32, "tensor is not i32");
  return reinterpret_cast<int32_t*>(raw());
}

uint16_t* Tensor::bf16() const {
  TT_CHECK_MSG(dtype_ == DType::bf16, "tensor is not bf16");
  return reinterpret_cast<uint16_t*>(raw());
}

uint8_t* Tensor::u8() const {
  TT_CHECK_MSG(dtype_ == DType::u8, "tensor is not u8");
  return reinterpret_cast<uint8_t*>(raw());
}

Tensor Tensor::reshape(Shape shape) const {
  TT_CHECK_MSG(shape.numel() == numel(), "reshape " + shape_.str() + " -> " + shape.str());
  return Tensor(storage_, offset_, shape, dtype_);
}

Tensor Tensor::slice_rows(int64_t begin, int64_t count) const {
  TT_CHECK(shape_.rank() >= 1 && begin >= 0 && begin + count <= shape_[0]);
  int64_t row = shape_[0] ? numel() / shape_[0] : 0;
  Shape s = shape_;
  Shape out;
  switch (s.rank()) {
    case 1: out = Shape{count}; break;
    case 2: out = Shape{count, s[1]}; break;
    case 3: out = Shape{count, s[1], s[2]}; break;
    default: out = Shape{count, s[1], s[2], s[3]}; break;
  }
  return Tensor(storage_, offset_ + begin * row, out, dtype_);
}

std::vector<float> Tensor::to_host_f32() const {
  std::vector<float> v(static_cast<size_t>(numel()));
  backend().copy_to_host(v.data(), f32(), bytes());
  return v;
}

std::vector<int32_t> Tensor::to_host_i32() const {
  std::vector<int32_t> v(static_cast<size_t>(numel()));
  backend().copy_to_host(v.data(), i32(), bytes());
  return v;
}

std::vector<uint16_t> Tensor::to_host_bf16() const {
  std::vector<uint16_t> v(static_cast<size_t>(numel()));
  backend().copy_to_host(v.data(), bf16(), bytes());
  return v;
}

void Tensor::copy_from(const Tensor& src) const {
  TT_CHECK(src.numel() == numel() && src.dtype() == dtype_);
  backend().copy(raw(), src.raw(), bytes());
}

void Tensor::zero() const {
  if (numel() == 0) return;
  switch (dtype_) {
    case DType::f32: backend().fill(f32(), 0.0f, numel()); return;
    case DType::i32: backend().fill(reinterpret_cast<float*>(raw()), 0.0f, numel()); return;  // all-zero bits
    case DType::bf16:
    case DType::u8: {  // 1- and 2-byte elements: fill's 4-byte writes could pass the end
      const std::vector<char> zeros(bytes());
      backend().copy_from_host(raw(), zeros.data(), bytes());
      return;
    }
  }
}

}  // namespace tt::tensor
