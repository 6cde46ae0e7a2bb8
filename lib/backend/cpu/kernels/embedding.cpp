// Token embeddings (scaled) plus positions, and their gradients.
//   y, dy: [B, T, D]   ids: [B, T]   table, dtable: [V, D]   positions, dpositions: [P, D]
#include <omp.h>

#include <cmath>

#include "backend/cpu/kernels/kernel_functions.h"

namespace tt::backend::cpu::TT_CPU_ISA {

void embedding_forward(const KernelContext& ctx, float* y, const int32_t* ids, const float* table, const float* positions,
                                   float scale, int B, int T, int D, int position_offset) {
  const int64_t N = static_cast<int64_t>(B) * T;
  int nt = threads_for(ctx, N * D);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    const float* e = table + static_cast<int64_t>(ids[i]) * D;
    float* yr = y + i * D;
    if (positions) {
      const float* pr = positions + static_cast<int64_t>(position_offset + i % T) * D;
#pragma omp simd
      for (int j = 0; j < D; ++j) yr[j] = std::fma(scale, e[j], pr[j]);
    } else {
#pragma omp simd
      for (int j = 0; j < D; ++j) yr[j] = scale * e[j];
    }
  }
}

void embedding_backward(const KernelContext& ctx, float* dtable, const float* dy, const int32_t* ids, float scale, int64_t N,
                                    int D) {
  // Thread t owns the table rows with id % n == t, n the threads OpenMP actually granted (it may grant
  // fewer than asked: thread limit, nested region, OMP_DYNAMIC): duplicate ids never race, and each row
  // receives its contributions in token order on any thread count.
  const int nt = threads_for(ctx, N * D);
#pragma omp parallel num_threads(nt)
  {
    const int tid = omp_get_thread_num(), granted = omp_get_num_threads();
    for (int64_t i = 0; i < N; ++i) {
      if (ids[i] % granted != tid) continue;
      float* d = dtable + static_cast<int64_t>(ids[i]) * D;
      const float* g = dy + i * D;
#pragma omp simd
      for (int j = 0; j < D; ++j) d[j] = std::fma(scale, g[j], d[j]);
    }
  }
}

void positions_backward(const KernelContext& ctx, float* dpositions, const float* dy, int B, int T, int D) {
  int nt = threads_for(ctx, static_cast<int64_t>(B) * T * D);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int t = 0; t < T; ++t) {
    float* d = dpositions + static_cast<int64_t>(t) * D;
    for (int b = 0; b < B; ++b) {
      const float* g = dy + (static_cast<int64_t>(b) * T + t) * D;
#pragma omp simd
      for (int j = 0; j < D; ++j) d[j] += g[j];
    }
  }
}

}  // namespace tt::backend::cpu::TT_CPU_ISA
