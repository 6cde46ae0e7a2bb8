// A running (max, sum of exp(x - max)) pair: one pass over a row gives its log-sum-exp (Milakov &
// Gimelshein, "Online normalizer calculation for softmax", 2018). Used by the vocabulary-wide row kernels
// (log_softmax, cross_entropy). Include only from .cu files.
#pragma once

#include <cuda_runtime.h>

#include <cmath>

#include "backend/cuda/kernel_utils.h"

namespace tt::backend::cuda_kernels {

struct OnlineSoftmax {
  float max = -INFINITY;
  float sum = 0.0f;

  __device__ void add(float x) {
    if (x > max) {
      sum = sum * expf(max - x) + 1.0f;  // max == -inf gives exp(-inf) == 0
      max = x;
    } else if (x != -INFINITY) {  // a NaN still reaches the sum, so a diverged row shows up in the loss
      sum += expf(x - max);
    }
  }
};

__device__ inline OnlineSoftmax merge(OnlineSoftmax a, OnlineSoftmax b) {
  if (b.max > a.max) {
    OnlineSoftmax t = a;
    a = b;
    b = t;
  }
  if (b.max > -INFINITY) a.sum += b.sum * expf(b.max - a.max);  // a.max >= b.max, both finite here
  return a;
}

__device__ inline OnlineSoftmax warp_merge(OnlineSoftmax v) {
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) {
    OnlineSoftmax other;
    other.max = __shfl_xor_sync(0xffffffffu, v.max, offset);
    other.sum = __shfl_xor_sync(0xffffffffu, v.sum, offset);
    v = merge(v, other);
  }
  return v;
}

// Merge over the whole block; every thread gets the result. Ends with a barrier (shared arrays reusable).
__device__ inline OnlineSoftmax block_merge(OnlineSoftmax v, float* shared_max, float* shared_sum) {
  int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  v = warp_merge(v);
  if (lane == 0) {
    shared_max[warp] = v.max;
    shared_sum[warp] = v.sum;
  }
  __syncthreads();
  OnlineSoftmax w;
  if (lane < warps) {
    w.max = shared_max[lane];
    w.sum = shared_sum[lane];
  }
  w = warp_merge(w);
  __syncthreads();
  return w;
}

}  // namespace tt::backend::cuda_kernels
