// Layer norm over the last dim.
//   x, y, dy, dx: [N, D]   gamma, beta, dgamma, dbeta: [D]   mean, rstd: [N] (saved by forward)
// Row kernels use one warp per row (lanes stride over D, reductions by shuffles); the parameter gradients
// are column sums taken in two passes in a fixed order (deterministic, no atomics).
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernel_utils.h"

namespace tt::backend {

using namespace cuda_kernels;

namespace {

constexpr int kRowsPerBlock = kBlock / kWarp;  // one warp per row
constexpr int kColumnRows = 16;                // row-threads per column in the parameter-gradient kernel

__global__ void layer_norm_forward_kernel(float* y, float* mean, float* rstd, const float* x, const float* gamma,
                                          const float* beta, int64_t N, int D, float eps) {
  const int lane = threadIdx.x % kWarp;
  for (int64_t row = blockIdx.x * int64_t{kRowsPerBlock} + threadIdx.x / kWarp; row < N;
       row += int64_t{gridDim.x} * kRowsPerBlock) {
    const float* xr = x + row * D;
    float* yr = y + row * D;
    // Mean, then the centred second moment (two passes: no cancellation as in E[x^2] - E[x]^2).
    float s = 0.0f;
    for (int j = lane; j < D; j += kWarp) s += xr[j];
    const float mu = warp_sum(s) / static_cast<float>(D);
    float q = 0.0f;
    for (int j = lane; j < D; j += kWarp) {
      float d = xr[j] - mu;
      q += d * d;
    }
    const float rs = 1.0f / sqrtf(warp_sum(q) / static_cast<float>(D) + eps);
    for (int j = lane; j < D; j += kWarp) yr[j] = (xr[j] - mu) * rs * gamma[j] + beta[j];
    if (lane == 0) {
      mean[row] = mu;
      rstd[row] = rs;
    }
  }
}

// Per chunk of kColumnChunk rows: partial_g[chunk, j] = sum_i dy[i, j] * xhat[i, j], partial_b[chunk, j] =
// sum_i dy[i, j] over the chunk's rows; block (32, kColumnRows) per 32 columns of one chunk. The chunks are
// then added in order (CudaBackend::add_chunk_sums): a fixed summation order that keeps the GPU busy.
__global__ void layer_norm_params_partial_kernel(float* partial_g, float* partial_b, const float* dy, const float* x,
                                                 const float* mean, const float* rstd, int64_t N, int D,
                                                 int64_t chunks) {
  __shared__ float rows_g[kColumnRows][kWarp + 1];
  __shared__ float rows_b[kColumnRows][kWarp + 1];
  for (int64_t chunk = blockIdx.y; chunk < chunks; chunk += gridDim.y) {
    const int64_t begin = chunk * CudaBackend::kColumnChunk;
    const int64_t end = min(N, begin + CudaBackend::kColumnChunk);
    for (int64_t tile = blockIdx.x; tile * kWarp < D; tile += gridDim.x) {
      const int64_t col = tile * kWarp + threadIdx.x;
      float sg = 0.0f, sb = 0.0f;
      if (col < D) {
        for (int64_t r = begin + threadIdx.y; r < end; r += kColumnRows) {
          const float g = dy[r * D + col];
          sg += g * (x[r * D + col] - mean[r]) * rstd[r];
          sb += g;
        }
      }
      rows_g[threadIdx.y][threadIdx.x] = sg;
      rows_b[threadIdx.y][threadIdx.x] = sb;
      __syncthreads();
      if (threadIdx.y == 0 && col < D) {
        float tg = 0.0f, tb = 0.0f;
        for (int r = 0; r < kColumnRows; ++r) {
          tg += rows_g[r][threadIdx.x];
          tb += rows_b[r][threadIdx.x];
        }
        partial_g[chunk * D + col] = tg;
        partial_b[chunk * D + col] = tb;
      }
      __syncthreads();
    }
  }
}

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma. dx may alias dy: every lane has read its
// elements of dy for both sums before the shuffle reductions return, and then writes only those elements.
__global__ void layer_norm_input_backward_kernel(float* dx, const float* dy, const float* x, const float* mean,
                                                 const float* rstd, const float* gamma, int64_t N, int D) {
  const int lane = threadIdx.x % kWarp;
  for (int64_t row = blockIdx.x * int64_t{kRowsPerBlock} + threadIdx.x / kWarp; row < N;
       row += int64_t{gridDim.x} * kRowsPerBlock) {
    const float* xr = x + row * D;
    const float* dyr = dy + row * D;
    float* dxr = dx + row * D;
    const float mu = mean[row], rs = rstd[row];
    float sum_g = 0.0f, sum_gx = 0.0f;
    for (int j = lane; j < D; j += kWarp) {
      float g = dyr[j] * gamma[j];
      sum_g += g;
      sum_gx += g * (xr[j] - mu) * rs;
    }
    const float mg = warp_sum(sum_g) / static_cast<float>(D);
    const float mgx = warp_sum(sum_gx) / static_cast<float>(D);
    for (int j = lane; j < D; j += kWarp) {
      float xhat = (xr[j] - mu) * rs;
      dxr[j] = rs * (dyr[j] * gamma[j] - mg - xhat * mgx);
    }
  }
}

}  // namespace

void CudaBackend::layer_norm_forward(float* y, float* mean, float* rstd, const float* x, const float* gamma,
                                     const float* beta, int64_t N, int D, float eps) {
  if (N <= 0 || D <= 0) return;
  layer_norm_forward_kernel<<<grid_for(N, kRowsPerBlock), kBlock, 0, stream_.get()>>>(y, mean, rstd, x, gamma,
                                                                                     beta, N, D, eps);
  TT_CUDA_CHECK_LAUNCH();
}

void CudaBackend::layer_norm_backward(float* dx, float* dgamma, float* dbeta, const float* dy, const float* x,
                                      const float* mean, const float* rstd, const float* gamma, int64_t N, int D) {
  if (N <= 0 || D <= 0) return;
  // Parameter sums first: they read dy, which the input gradient may overwrite (dx may alias dy).
  const int64_t chunks = column_chunks(N);
  float* partial_g = column_scratch(2 * static_cast<size_t>(chunks) * D);
  float* partial_b = partial_g + chunks * D;
  layer_norm_params_partial_kernel<<<column_grid(chunks, D), dim3(kWarp, kColumnRows), 0, stream_.get()>>>(
      partial_g, partial_b, dy, x, mean, rstd, N, D, chunks);
  TT_CUDA_CHECK_LAUNCH();
  add_chunk_sums(dgamma, partial_g, chunks, D);
  add_chunk_sums(dbeta, partial_b, chunks, D);
  layer_norm_input_backward_kernel<<<grid_for(N, kRowsPerBlock), kBlock, 0, stream_.get()>>>(dx, dy, x, mean, rstd,
                                                                                            gamma, N, D);
  TT_CUDA_CHECK_LAUNCH();
}

}  // namespace tt::backend
