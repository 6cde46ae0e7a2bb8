// Device memory for the CUDA backend: a caching allocator with free lists by block size, so that once the
// first training step has sized everything, later steps never call cudaMalloc/cudaFree (both synchronise
// the device). Plain C++ header: no CUDA types.
//
// Stream-ordering: the backend issues all work on one stream, so a block freed on the host can be handed
// out again at once — any kernel that used it was enqueued before any kernel that will reuse it.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <unordered_map>

namespace tt::backend {

class CachingAllocator {
 public:
  explicit CachingAllocator(int device) : device_(device) {}
  ~CachingAllocator();  // returns every block to the driver
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // At least `bytes` bytes, 256-byte aligned (cudaMalloc's guarantee). Throws tt::Error when the device is
  // out of memory even after the cache has been released.
  void* allocate(size_t bytes);
  // Back into the free list; unknown pointers are ignored (noexcept: called from destructors).
  void deallocate(void* ptr) noexcept;
  // cudaFree every cached (free) block.
  void release_cached() noexcept;

  size_t bytes_in_use() const;
  size_t bytes_cached() const;

 private:
  void* cuda_malloc(size_t bytes);  // nullptr when out of memory
  void release_cached_locked() noexcept;

  int device_;
  mutable std::mutex mutex_;
  std::multimap<size_t, void*> free_;        // block size -> block
  std::unordered_map<void*, size_t> live_;   // block -> block size
  size_t bytes_in_use_ = 0;
  size_t bytes_cached_ = 0;
};

// Block sizes: rounded up to 512 bytes so that near-equal requests share free lists.
constexpr size_t round_block_size(size_t bytes) { return bytes == 0 ? 512 : (bytes + 511) / 512 * 512; }

}  // namespace tt::backend
