// DeviceBuffer: an RAII, move-only block from the CachingAllocator, for the backend's own scratch memory
// (tensors get theirs through tensor::Buffer and Backend::allocate). Plain C++ header.
#pragma once

#include <cstddef>

#include "backend/cuda/caching_allocator.h"

namespace tt::backend {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(CachingAllocator& allocator, size_t bytes)
      : allocator_(&allocator), data_(allocator.allocate(bytes)), bytes_(bytes) {}
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : allocator_(o.allocator_), data_(o.data_), bytes_(o.bytes_) {
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      allocator_ = o.allocator_;
      data_ = o.data_;
      bytes_ = o.bytes_;
      o.data_ = nullptr;
      o.bytes_ = 0;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void release() noexcept {
    if (data_) allocator_->deallocate(data_);
    data_ = nullptr;
  }
  CachingAllocator* allocator_ = nullptr;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace tt::backend
