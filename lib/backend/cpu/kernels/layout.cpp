// Row gathers (beam reordering of KV caches) and scatters (a few values written into a matrix).
//   gather:  src: [*, D]   index: [N]   dst: [N, D]
//   scatter: src: [N, D]   index: [N], distinct   dst: [*, D]
#include <cstring>

#include "backend/cpu/kernels/kernel_functions.h"

namespace tt::backend::cpu::TT_CPU_ISA {

void gather_rows(const KernelContext& ctx, float* dst, const float* src, const int32_t* index, int64_t N, int64_t D) {
  int nt = threads_for(ctx, N * D);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    std::memcpy(dst + i * D, src + static_cast<int64_t>(index[i]) * D, static_cast<size_t>(D) * sizeof(float));
  }
}

void scatter_rows(const KernelContext& ctx, float* dst, const float* src, const int32_t* index, int64_t N, int64_t D) {
  int nt = threads_for(ctx, N * D);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    std::memcpy(dst + static_cast<int64_t>(index[i]) * D, src + i * D, static_cast<size_t>(D) * sizeof(float));
  }
}

}  // namespace tt::backend::cpu::TT_CPU_ISA
