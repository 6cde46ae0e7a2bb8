// Memory, copies and fills of the CPU backend; construction and thread-count policy.
// Buffers are plain host memory aligned to 64 bytes (one AVX-512 vector / cache line).
#include "backend/cpu/cpu_backend.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "backend/cpu/matmul_cache.h"
#include "util/error.h"

namespace tt::backend::cpu {

CpuBackend::CpuBackend(int threads) : threads_(threads > 0 ? threads : std::max(1, omp_get_num_procs())) {
  omp_set_num_threads(threads_);  // the calling thread's ICV, read by oneDNN (see cpu_backend.h)
}

CpuBackend::~CpuBackend() = default;  // out of line: MatmulCache is incomplete in the header

std::string CpuBackend::name() const {
  return "cpu (oneDNN, " + std::to_string(threads_) + (threads_ == 1 ? " thread)" : " threads)");
}

int CpuBackend::threads_for(int64_t work) const {
  // Below ~32k elements a fork/join costs more than the loop itself.
  constexpr int64_t kPerThread = 16384;
  int64_t t = std::max<int64_t>(1, work / kPerThread);
  return static_cast<int>(std::min<int64_t>(t, threads_));
}

float* CpuBackend::scratch(size_t n) {
  if (scratch_.size() < n) scratch_.resize(n);
  return scratch_.data();
}

void* CpuBackend::allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  size_t rounded = (bytes + 63) / 64 * 64;  // aligned_alloc wants a multiple of the alignment
  void* p = std::aligned_alloc(64, rounded);
  if (!p) {
    throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes",
                "use a smaller --batch-tokens or model");
  }
  return p;
}

void CpuBackend::deallocate(void* ptr, size_t /*bytes*/) noexcept { std::free(ptr); }

void CpuBackend::copy_from_host(void* dst, const void* host_src, size_t bytes) { copy(dst, host_src, bytes); }

void CpuBackend::copy_to_host(void* host_dst, const void* src, size_t bytes) { copy(host_dst, src, bytes); }

void CpuBackend::copy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return;
  int nt = threads_for(static_cast<int64_t>(bytes / 4));
  if (nt <= 1) {
    std::memmove(dst, src, bytes);
    return;
  }
  // Large copies of distinct buffers: split in cache-line-aligned pieces.
  auto* d = static_cast<char*>(dst);
  auto* s = static_cast<const char*>(src);
  if (d < s + bytes && s < d + bytes) {
    std::memmove(dst, src, bytes);
    return;
  }
  size_t piece = (bytes / nt + 63) / 64 * 64;
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int i = 0; i < nt; ++i) {
    size_t begin = std::min(bytes, i * piece), end = std::min(bytes, begin + piece);
    if (end > begin) std::memcpy(d + begin, s + begin, end - begin);
  }
}

void CpuBackend::fill(float* x, float value, int64_t n) {
  int nt = threads_for(n);
#pragma omp parallel for simd num_threads(nt) schedule(static)
  for (int64_t i = 0; i < n; ++i) x[i] = value;
}

}  // namespace tt::backend::cpu
