// A block of device memory owned through its backend (RAII, move-only).
#pragma once

#include <cstddef>

#include "backend/backend.h"

namespace tt::tensor {

class Buffer {
 public:
  Buffer() = default;
  Buffer(backend::Backend& backend, size_t bytes)
      : backend_(&backend), data_(bytes ? backend.allocate(bytes) : nullptr), bytes_(bytes) {}
  // Takes `data`, `bytes` long, allocated by `backend` (allocate_zeroed).
  Buffer(backend::Backend& backend, size_t bytes, void* data) : backend_(&backend), data_(data), bytes_(bytes) {}
  ~Buffer() { release(); }
  Buffer(Buffer&& o) noexcept : backend_(o.backend_), data_(o.data_), bytes_(o.bytes_) {
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      release();
      backend_ = o.backend_;
      data_ = o.data_;
      bytes_ = o.bytes_;
      o.data_ = nullptr;
      o.bytes_ = 0;
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  backend::Backend* backend() const { return backend_; }

 private:
  void release() noexcept {
    if (data_) backend_->deallocate(data_, bytes_);
    data_ = nullptr;
  }
  backend::Backend* backend_ = nullptr;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace tt::tensor
