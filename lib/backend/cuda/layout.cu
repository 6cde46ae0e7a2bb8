// Row gathers (beam reordering of KV caches).
//   src: [*, D]   index: [N]   dst: [N, D]
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernel_utils.h"

namespace tt::backend {

using namespace cuda_kernels;

namespace {

__global__ void gather_rows_kernel(float* dst, const float* src, const int32_t* index, int64_t D, int64_t n) {
  for (int64_t e = thread_index(); e < n; e += thread_stride()) {
    const int64_t i = e / D;
    dst[e] = src[static_cast<int64_t>(index[i]) * D + e % D];
  }
}

}  // namespace

void CudaBackend::gather_rows(float* dst, const float* src, const int32_t* index, int64_t N, int64_t D) {
  const int64_t n = N * D;
  if (n <= 0) return;
  gather_rows_kernel<<<grid_for(n, kBlock), kBlock, 0, stream_.get()>>>(dst, src, index, D, n);
  TT_CUDA_CHECK_LAUNCH();
}

}  // namespace tt::backend
