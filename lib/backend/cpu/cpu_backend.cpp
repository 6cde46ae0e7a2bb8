// Memory, copies and fills of the CPU backend; construction and thread-count policy.
// Buffers are plain host memory aligned to 64 bytes (one AVX-512 vector / cache line).
#include "backend/cpu/cpu_backend.h"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "backend/cpu/gemm_bf16.h"
#include "backend/cpu/matmul_cache.h"
#include "util/check.h"
#include "util/error.h"

namespace tt::backend::cpu {

std::vector<std::string> supported_isas() {
  std::vector<std::string> isas{"baseline"};
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) isas.push_back("avx2");
  if (isas.size() == 2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    isas.push_back("avx512");
#endif
  return isas;
}

const KernelTable& select_kernels(const std::string& isa) {
  const std::vector<std::string> isas = supported_isas();
  const std::string name = isa == "auto" ? isas.back() : isa;
  if (std::find(isas.begin(), isas.end(), name) == isas.end())
    throw ConfigError("CPU kernels '" + isa + "' are not available on this processor",
                      "available: " + [&] {
                        std::string all;
                        for (const auto& i : isas) all += (all.empty() ? "" : ", ") + i;
                        return all;
                      }());
#if defined(__x86_64__)
  if (name == "avx512") return avx512::kernel_table;
  if (name == "avx2") return avx2::kernel_table;
#endif
  return baseline::kernel_table;
}

CpuBackend::CpuBackend(int threads, const std::string& isa)
    : threads_(threads > 0 ? threads : std::max(1, omp_get_num_procs())),
      kernels_(&select_kernels(isa)),
      ctx_{threads_, this, &CpuBackend::scratch_for} {
  omp_set_num_threads(threads_);  // the calling thread's ICV, read by oneDNN (see cpu_backend.h)
}

CpuBackend::~CpuBackend() = default;  // out of line: MatmulCache, Bf16Gemm are incomplete in the header

std::string CpuBackend::name() const {
  return "cpu (oneDNN, " + std::to_string(threads_) + (threads_ == 1 ? " thread, " : " threads, ") + kernels_->isa +
         " kernels)";
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
  // Big buffers (the step's activation arena, weights, gradients, Adam moments) on 2 MiB pages where the
  // kernel offers them on request (transparent huge pages in "madvise" mode): a `tiny` step walks tens of
  // MB, more than the TLB covers in 4 KiB pages. Not for decoding (row-invariant mode), whose caches are
  // written a few KB at a time and batch by batch: there every touch would back 2 MiB (the demo model's
  // tt-translate held 20 MB more per worker, and was no faster).
  constexpr size_t kHuge = size_t{2} << 20;
  const bool huge = bytes >= 2 * kHuge && !row_invariant_;
  const size_t align = huge ? kHuge : 64;
  size_t rounded = (bytes + align - 1) / align * align;  // aligned_alloc wants a multiple of the alignment
  void* p = std::aligned_alloc(align, rounded);
#if defined(__linux__)
  if (p && huge) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without it, 4 KiB pages
#endif
  if (!p) {
    throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes",
                "use a smaller --batch-tokens or model");
  }
  return p;
}

namespace {

constexpr size_t kHugePage = size_t{2} << 20;
size_t mapped_size(size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

}  // namespace

// A mapping of its own, aligned to and advised for huge pages like allocate()'s big buffers. It reads as
// zeros and its pages are backed only once written, so zero-initialised weights cost no memory before they
// are loaded, and weights that are never written (those a decoding backend adopts and reads from its packed
// copy, see packed_gemm.h) never cost any.
void* CpuBackend::allocate_zeroed(size_t bytes) {
#if defined(__linux__)
  if (bytes < 2 * kHugePage) return nullptr;
  // A huge page more than needed, then the unaligned head and the tail unmapped.
  const size_t size = mapped_size(bytes), span = size + kHugePage;
  void* m = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes", "use a smaller model");
  const auto base = reinterpret_cast<uintptr_t>(m);
  const uintptr_t aligned = (base + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > base) munmap(m, aligned - base);
  if (base + span > aligned + size) munmap(reinterpret_cast<void*>(aligned + size), base + span - aligned - size);
  void* p = reinterpret_cast<void*>(aligned);
  if (!row_invariant_) madvise(p, size, MADV_HUGEPAGE);  // advice only; not for decoding, as allocate()
  const std::lock_guard<std::mutex> lock(mapped_mutex_);
  mapped_.insert(p);
  return p;
#else
  (void)bytes;
  return nullptr;
#endif
}

void CpuBackend::discard(void* ptr, size_t bytes) {
#if defined(__linux__)
  // The whole pages inside the range, kept out of huge pages too: else a write next to the range (a bias
  // beside an adopted weight) would back a 2 MiB page that covers most of it.
  const uintptr_t page = 4096, begin = (reinterpret_cast<uintptr_t>(ptr) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(ptr) + bytes) / page * page;
  if (end <= begin) return;
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_NOHUGEPAGE);
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
#else
  (void)ptr;
  (void)bytes;
#endif
}

void CpuBackend::deallocate(void* ptr, size_t bytes) noexcept {
#if defined(__linux__)
  {
    const std::lock_guard<std::mutex> lock(mapped_mutex_);
    if (mapped_.erase(ptr)) {
      munmap(ptr, mapped_size(bytes));
      return;
    }
  }
#else
  (void)bytes;
#endif
  std::free(ptr);
}

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
  const int nt = threads_for(n);
  if (std::bit_cast<uint32_t>(value) == 0) {
    // Zeros (a step's gradients: 48 M floats at base) by memset, one piece per thread: the C library's
    // widest stores, non-temporal at this size, so the lines are not read before they are overwritten.
#pragma omp parallel num_threads(nt)
    {
      const int64_t t = omp_get_thread_num(), parts = omp_get_num_threads();
      const int64_t begin = n * t / parts, end = n * (t + 1) / parts;
      std::memset(x + begin, 0, static_cast<size_t>(end - begin) * sizeof(float));
    }
    return;
  }
#pragma omp parallel for simd num_threads(nt) schedule(static)
  for (int64_t i = 0; i < n; ++i) x[i] = value;
}

void CpuBackend::cross_entropy_forward_backward(float* loss, float* nll, float* logits, const int32_t* targets,
                                                int64_t N, int V, float eps, int32_t ignore_id, float grad_scale) {
  for (int64_t i = 0; i < N; ++i)  // cheap, and an out-of-range id would read past the row
    TT_CHECK_MSG(targets[i] == ignore_id || (targets[i] >= 0 && targets[i] < V),
                 "target " + std::to_string(targets[i]) + " outside [0, " + std::to_string(V) + ")");
  kernels_->cross_entropy_forward_backward(ctx_, loss, nll, logits, bf16_output_copy(logits, N * V), targets, N, V,
                                           eps, ignore_id, grad_scale);
}

}  // namespace tt::backend::cpu
