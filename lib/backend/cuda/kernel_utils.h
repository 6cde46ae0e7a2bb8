// Shared device helpers for the CUDA kernels: launch sizing and warp/block reductions. Include only from
// .cu files.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tt::backend::cuda_kernels {

constexpr int kBlock = 256;     // threads per block of the elementwise kernels
constexpr int kWarp = 32;
constexpr int kMaxGrid = 65535 * 8;  // grid-stride loops cover the rest

// Blocks for `n` work items at `per_block` items per block: at least 1, capped (kernels grid-stride).
inline unsigned grid_for(int64_t n, int64_t per_block) {
  int64_t blocks = (n + per_block - 1) / per_block;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, kMaxGrid));
}

// Blocks of a two-pass column reduction: 32-column tiles by row chunks (gridDim.y is at most 65535; the
// kernels grid-stride over the rest).
inline dim3 column_grid(int64_t chunks, int64_t columns) {
  return dim3(grid_for(columns, kWarp), static_cast<unsigned>(std::clamp<int64_t>(chunks, 1, 65535)));
}

// Grid-stride loop bounds: for (int64_t i = thread_index(); i < n; i += thread_stride()).
__device__ inline int64_t thread_index() { return blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; }
__device__ inline int64_t thread_stride() { return gridDim.x * static_cast<int64_t>(blockDim.x); }

__device__ inline float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ inline double warp_sum(double v) {
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ inline float warp_max(float v) {
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Sum over the whole block (blockDim.x a multiple of 32, at most 1024); every thread gets the result.
// `shared` holds 32 values. Ends with a barrier, so `shared` may be reused right after.
// float for row reductions, double for sum_squares: one body for both.
template <typename T>
__device__ inline T block_sum(T v, T* shared) {
  int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  v = warp_sum(v);
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < warps ? shared[lane] : T(0);
  v = warp_sum(v);
  __syncthreads();
  return v;
}

__device__ inline float block_max(float v, float* shared) {
  int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  v = warp_max(v);
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < warps ? shared[lane] : -INFINITY;
  v = warp_max(v);
  __syncthreads();
  return v;
}

}  // namespace tt::backend::cuda_kernels
