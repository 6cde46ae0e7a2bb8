// Row gathers (beam reordering of KV caches).
//   src: [*, D]   index: [N]   dst: [N, D]
#include <cstring>

#include "backend/cpu/cpu_backend.h"

namespace tt::backend::cpu {

void CpuBackend::gather_rows(float* dst, const float* src, const int32_t* index, int64_t N, int64_t D) {
  int nt = threads_for(N * D);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    std::memcpy(dst + i * D, src + static_cast<int64_t>(index[i]) * D, static_cast<size_t>(D) * sizeof(float));
  }
}

}  // namespace tt::backend::cpu
