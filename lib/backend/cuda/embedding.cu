// Token embeddings (scaled) plus positions, and their gradients.
//   y, dy: [B, T, D]   ids: [B, T]   table, dtable: [V, D]   positions, dpositions: [P, D]
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernel_utils.h"

namespace tt::backend {

using namespace cuda_kernels;

namespace {

// One block per token row (grid-striding over tokens), threads over D: the id is read once per row.
__global__ void embedding_forward_kernel(float* y, const int32_t* ids, const float* table, const float* positions,
                                         float scale, int T, int D, int position_offset, int64_t N) {
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {  // token i = b * T + t
    const float* e = table + static_cast<int64_t>(ids[i]) * D;
    float* yr = y + i * D;
    if (positions) {
      const float* pr = positions + (position_offset + i % T) * D;
      for (int j = threadIdx.x; j < D; j += blockDim.x) yr[j] = fmaf(scale, e[j], pr[j]);
    } else {
      for (int j = threadIdx.x; j < D; j += blockDim.x) yr[j] = scale * e[j];
    }
  }
}

// Duplicate ids add into the same table row from different blocks: atomicAdd makes that race-free. The
// order of those additions (hence the last bits of a row hit by several tokens) may vary between runs.
__global__ void embedding_backward_kernel(float* dtable, const float* dy, const int32_t* ids, float scale, int D,
                                          int64_t N) {
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {
    float* d = dtable + static_cast<int64_t>(ids[i]) * D;
    const float* g = dy + i * D;
    for (int j = threadIdx.x; j < D; j += blockDim.x) atomicAdd(d + j, scale * g[j]);
  }
}

// dpositions[t, j] += sum_b dy[b, t, j]: one thread per (t, j), batch summed in order (no atomics).
__global__ void positions_backward_kernel(float* dpositions, const float* dy, int B, int T, int D) {
  const int64_t n = int64_t{T} * D;
  for (int64_t e = thread_index(); e < n; e += thread_stride()) {
    float sum = 0.0f;
    for (int b = 0; b < B; ++b) sum += dy[b * n + e];
    dpositions[e] += sum;
  }
}

}  // namespace

void CudaBackend::embedding_forward(float* y, const int32_t* ids, const float* table, const float* positions,
                                    float scale, int B, int T, int D, int position_offset) {
  const int64_t N = int64_t{B} * T;
  if (N <= 0 || D <= 0) return;
  embedding_forward_kernel<<<grid_for(N, 1), kBlock, 0, stream_.get()>>>(y, ids, table, positions, scale, T, D,
                                                                        position_offset, N);
  TT_CUDA_CHECK_LAUNCH();
}

void CudaBackend::embedding_backward(float* dtable, const float* dy, const int32_t* ids, float scale, int64_t N,
                                     int D) {
  if (N <= 0 || D <= 0) return;
  embedding_backward_kernel<<<grid_for(N, 1), kBlock, 0, stream_.get()>>>(dtable, dy, ids, scale, D, N);
  TT_CUDA_CHECK_LAUNCH();
}

void CudaBackend::positions_backward(float* dpositions, const float* dy, int B, int T, int D) {
  const int64_t n = int64_t{T} * D;
  if (n <= 0 || B <= 0) return;
  positions_backward_kernel<<<grid_for(n, kBlock), kBlock, 0, stream_.get()>>>(dpositions, dy, B, T, D);
  TT_CUDA_CHECK_LAUNCH();
}

}  // namespace tt::backend
