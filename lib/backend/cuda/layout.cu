// Row gathers (beam reordering of KV caches) and scatters (a few values written into a matrix).
//   gather:  src: [*, D]   index: [N]   dst: [N, D]
//   scatter: src: [N, D]   index: [N], distinct   dst: [*, D]
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernel_utils.h"

namespace tt::backend {

using namespace cuda_kernels;

namespace {

// One block per destination row (grid-striding over rows), threads over the columns.
__global__ void gather_rows_kernel(float* dst, const float* src, const int32_t* index, int64_t N, int64_t D) {
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {
    const float* s = src + static_cast<int64_t>(index[i]) * D;
    float* d = dst + i * D;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) d[j] = s[j];
  }
}

// One block per source row, as the gather.
__global__ void scatter_rows_kernel(float* dst, const float* src, const int32_t* index, int64_t N, int64_t D) {
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {
    const float* s = src + i * D;
    float* d = dst + static_cast<int64_t>(index[i]) * D;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) d[j] = s[j];
  }
}

}  // namespace

void CudaBackend::gather_rows(float* dst, const float* src, const int32_t* index, int64_t N, int64_t D) {
  if (N <= 0 || D <= 0) return;
  gather_rows_kernel<<<grid_for(N, 1), kBlock, 0, stream_.get()>>>(dst, src, index, N, D);
  TT_CUDA_CHECK_LAUNCH();
}

void CudaBackend::scatter_rows(float* dst, const float* src, const int32_t* index, int64_t N, int64_t D) {
  if (N <= 0 || D <= 0) return;
  scatter_rows_kernel<<<grid_for(N, 1), kBlock, 0, stream_.get()>>>(dst, src, index, N, D);
  TT_CUDA_CHECK_LAUNCH();
}

}  // namespace tt::backend
