// Dropout and its fusions. Element i (flat index over the whole tensor) is kept iff
// util::dropout_keep(key.seed, key.stream, i, p), and kept values are scaled by 1/(1-p): the rule of
// util/rng.h, so CPU and CUDA masks agree bit for bit. One Philox call yields the 16-bit draws of elements
// 8j .. 8j+7, so each thread handles such a group of eight.
//   bias_relu_dropout: y, x [N, F], bias [F]      others: flat [n]
#include <cstdint>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernel_utils.h"
#include "util/rng.h"

namespace tt::backend {

using namespace cuda_kernels;

namespace {

float keep_scale(float p) { return p < 1.0f ? 1.0f / (1.0f - p) : 0.0f; }

constexpr int kGroup = 8;  // elements per Philox call: util::dropout_block's
int64_t groups_of(int64_t n) { return (n + kGroup - 1) / kGroup; }

// std::max(v, 0.0f), as the CPU backend computes it: a NaN passes through (fmaxf would turn it into 0).
__device__ inline float relu(float v) { return v < 0.0f ? 0.0f : v; }

// y = residual + dropout(x), or y = dropout(x) when residual is null (also dropout's backward: dx = mask*dy*s).
__global__ void dropout_kernel(float* y, const float* residual, const float* x, int64_t n, uint32_t threshold,
                               float scale, DropoutKey key) {
  for (int64_t g = thread_index(); g * kGroup < n; g += thread_stride()) {
    const util::Philox4 bits = util::dropout_block(key.seed, key.stream, static_cast<uint64_t>(g));
    for (int k = 0; k < kGroup; ++k) {
      int64_t i = g * kGroup + k;
      if (i >= n) break;
      // x * (0 or scale), as on the CPU (a NaN stays a NaN even where dropped); __fmul_rn: no contraction into
      // an FMA with the residual add, so results match the CPU's bit for bit.
      float v = __fmul_rn(x[i], util::dropout_half(bits, k) >= threshold ? scale : 0.0f);
      y[i] = residual ? residual[i] + v : v;
    }
  }
}

__global__ void bias_relu_dropout_kernel(float* y, const float* x, const float* bias, int64_t n, int F,
                                         uint32_t threshold, float scale, DropoutKey key) {
  for (int64_t g = thread_index(); g * kGroup < n; g += thread_stride()) {
    const util::Philox4 bits = util::dropout_block(key.seed, key.stream, static_cast<uint64_t>(g));
    int col = static_cast<int>(g * kGroup % F);  // one division per group; a group may wrap into the next row
    for (int k = 0; k < kGroup; ++k) {
      int64_t i = g * kGroup + k;
      if (i >= n) break;
      y[i] = relu(x[i] + bias[col]) * (util::dropout_half(bits, k) >= threshold ? scale : 0.0f);
      if (++col == F) col = 0;
    }
  }
}

// p == 0: no random numbers at all (every draw is >= threshold 0, so the mask would keep everything anyway).
__global__ void bias_relu_kernel(float* y, const float* x, const float* bias, int64_t N, int F) {
  for (int64_t row = blockIdx.x; row < N; row += gridDim.x) {
    for (int j = threadIdx.x; j < F; j += blockDim.x) y[row * F + j] = relu(x[row * F + j] + bias[j]);
  }
}

__global__ void relu_dropout_backward_kernel(float* dx, const float* dy, const float* y, int64_t n, float scale) {
  for (int64_t i = thread_index(); i < n; i += thread_stride()) dx[i] = dy[i] * (y[i] > 0.0f ? scale : 0.0f);
}

}  // namespace

void CudaBackend::bias_relu_dropout_forward(float* y, const float* x, const float* bias, int64_t N, int F, float p,
                                            DropoutKey key) {
  int64_t n = N * F;
  if (n <= 0) return;
  if (p <= 0.0f) {
    bias_relu_kernel<<<grid_for(N, 1), kBlock, 0, stream_.get()>>>(y, x, bias, N, F);
  } else {
    bias_relu_dropout_kernel<<<grid_for(groups_of(n), kBlock), kBlock, 0, stream_.get()>>>(
        y, x, bias, n, F, util::dropout_threshold(p), keep_scale(p), key);
  }
  TT_CUDA_CHECK_LAUNCH();
}

void CudaBackend::relu_dropout_backward(float* dx, const float* dy, const float* y, int64_t n, float p) {
  if (n <= 0) return;
  float scale = p <= 0.0f ? 1.0f : keep_scale(p);
  relu_dropout_backward_kernel<<<grid_for(n, kBlock), kBlock, 0, stream_.get()>>>(dx, dy, y, n, scale);
  TT_CUDA_CHECK_LAUNCH();
}

void CudaBackend::dropout_add_forward(float* y, const float* residual, const float* x, int64_t n, float p,
                                      DropoutKey key) {
  if (n <= 0) return;
  if (p <= 0.0f) {
    add(y, residual, x, n);
    return;
  }
  dropout_kernel<<<grid_for(groups_of(n), kBlock), kBlock, 0, stream_.get()>>>(
      y, residual, x, n, util::dropout_threshold(p), keep_scale(p), key);
  TT_CUDA_CHECK_LAUNCH();
}

void CudaBackend::dropout_forward(float* y, const float* x, int64_t n, float p, DropoutKey key) {
  if (n <= 0) return;
  if (p <= 0.0f) {
    copy(y, x, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  dropout_kernel<<<grid_for(groups_of(n), kBlock), kBlock, 0, stream_.get()>>>(
      y, nullptr, x, n, util::dropout_threshold(p), keep_scale(p), key);
  TT_CUDA_CHECK_LAUNCH();
}

void CudaBackend::dropout_backward(float* dx, const float* dy, int64_t n, float p, DropoutKey key) {
  // The same mask and scale as the forward pass, applied to the incoming gradient.
  dropout_forward(dx, dy, n, p, key);
}

}  // namespace tt::backend
