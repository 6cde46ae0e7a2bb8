// A device-agnostic tensor: shared storage + element offset + shape + dtype. Copying a Tensor copies the
// handle, not the data (views share storage). Data moves to/from the host only through the explicit calls.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "tensor/buffer.h"
#include "tensor/dtype.h"
#include "tensor/shape.h"

namespace tt::tensor {

class Tensor {
 public:
  Tensor() = default;
  // A fresh tensor with its own buffer (contents uninitialised).
  static Tensor empty(backend::Backend& backend, Shape shape, DType dtype = DType::f32);
  static Tensor zeros(backend::Backend& backend, Shape shape, DType dtype = DType::f32);
  static Tensor from_host(backend::Backend& backend, Shape shape, const std::vector<float>& values);
  static Tensor from_host(backend::Backend& backend, Shape shape, const std::vector<int32_t>& values);
  // A tensor over existing storage (used by Arena).
  Tensor(std::shared_ptr<Buffer> storage, int64_t offset, Shape shape, DType dtype)
      : storage_(std::move(storage)), offset_(offset), shape_(shape), dtype_(dtype) {}

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int64_t dim(int i) const { return shape_[i]; }
  int64_t numel() const { return shape_.numel(); }
  DType dtype() const { return dtype_; }
  size_t bytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  backend::Backend& backend() const { return *storage_->backend(); }

  float* f32() const;
  int32_t* i32() const;
  uint16_t* bf16() const;
  uint8_t* u8() const;

  // Same storage, another shape with the same element count.
  Tensor reshape(Shape shape) const;
  // Rows [begin, begin + count) along dim 0, as a view.
  Tensor slice_rows(int64_t begin, int64_t count) const;

  std::vector<float> to_host_f32() const;
  std::vector<int32_t> to_host_i32() const;
  std::vector<uint16_t> to_host_bf16() const;
  void copy_from(const Tensor& src) const;  // same numel and dtype, same backend
  void zero() const;

 private:
  char* raw() const;
  std::shared_ptr<Buffer> storage_;
  int64_t offset_ = 0;  // elements
  Shape shape_;
  DType dtype_ = DType::f32;
};

}  // namespace tt::tensor
