// The caching allocator (see caching_allocator.h).
#include "backend/cuda/caching_allocator.h"

#include <cuda_runtime.h>

#include <sstream>

#include "backend/cuda/cuda_check.h"

namespace tt::backend {

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_cached_locked();
  // Blocks still live belong to Buffers that outlived their backend (a caller bug); free them anyway so the
  // device memory is not leaked for the rest of the process.
  for (auto& [ptr, size] : live_) cudaFree(ptr);
  live_.clear();
}

void* CachingAllocator::cuda_malloc(size_t bytes) {
  void* ptr = nullptr;
  cudaError_t status = cudaMalloc(&ptr, bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear the sticky-free error so later checks do not report it again
    return nullptr;
  }
  TT_CUDA_CHECK(status);
  return ptr;
}

void* CachingAllocator::allocate(size_t bytes) {
  size_t size = round_block_size(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  // Best fit among cached blocks, wasting at most a quarter of the request.
  auto it = free_.lower_bound(size);
  if (it != free_.end() && it->first <= size + size / 4) {
    void* ptr = it->second;
    size_t block = it->first;
    free_.erase(it);
    bytes_cached_ -= block;
    live_.emplace(ptr, block);
    bytes_in_use_ += block;
    return ptr;
  }
  void* ptr = cuda_malloc(size);
  if (!ptr && !free_.empty()) {  // fragmentation: give the cache back to the driver and try once more
    release_cached_locked();
    ptr = cuda_malloc(size);
  }
  if (!ptr) {
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) cudaGetLastError();
    std::ostringstream os;
    os << "CUDA out of memory on cuda:" << device_ << ": could not allocate " << (size >> 20) << " MiB ("
       << (bytes_in_use_ >> 20) << " MiB in use by tt, " << (free_bytes >> 20) << " of " << (total_bytes >> 20)
       << " MiB free on the device)";
    throw Error(os.str(), "use a smaller batch, free the GPU, or run with --device cpu");
  }
  live_.emplace(ptr, size);
  bytes_in_use_ += size;
  return ptr;
}

void CachingAllocator::deallocate(void* ptr) noexcept {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return;
  free_.emplace(it->second, ptr);
  bytes_cached_ += it->second;
  bytes_in_use_ -= it->second;
  live_.erase(it);
}

void CachingAllocator::release_cached() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  release_cached_locked();
}

void CachingAllocator::release_cached_locked() noexcept {
  for (auto& [size, ptr] : free_) cudaFree(ptr);  // cudaFree waits for the device: no kernel still uses it
  free_.clear();
  bytes_cached_ = 0;
}

size_t CachingAllocator::bytes_in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_in_use_;
}

size_t CachingAllocator::bytes_cached() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_cached_;
}

}  // namespace tt::backend
