// Attention softmax (in place, masked) and row log-softmax.
//   scores, grad, probs: [B, H, Tq, Tk]   key_lengths: [B] (may be null)   log_softmax x: [N, V]
// Masked keys are never exponentiated: a row's valid prefix [0, len) is normalised and the rest is written
// as exact zeros, so padded and future weights are 0, not merely tiny (as on the CPU).
// Attention rows (Tk is short) take one warp each; log-softmax rows (V is the vocabulary) one block each.
#include <cmath>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernel_utils.h"
#include "backend/cuda/online_softmax.h"

namespace tt::backend {

using namespace cuda_kernels;

namespace {

constexpr int kRowsPerBlock = kBlock / kWarp;
constexpr int kVocabBlock = 512;  // threads per log-softmax row

__global__ void attention_softmax_forward_kernel(float* scores, const int32_t* key_lengths, int H, int Tq, int Tk,
                                                 int64_t rows, float scale, bool causal, int query_offset) {
  const int lane = threadIdx.x % kWarp;
  for (int64_t r = blockIdx.x * int64_t{kRowsPerBlock} + threadIdx.x / kWarp; r < rows;
       r += int64_t{gridDim.x} * kRowsPerBlock) {
    const int b = static_cast<int>(r / (int64_t{H} * Tq));
    const int q = static_cast<int>(r % Tq);
    int len = Tk;
    if (key_lengths) len = min(len, key_lengths[b]);
    if (causal) len = min(len, q + query_offset + 1);
    len = max(len, 1);  // every row keeps key 0
    float* s = scores + r * Tk;
    float mx = -INFINITY;
    for (int k = lane; k < len; k += kWarp) mx = fmaxf(mx, s[k] * scale);
    mx = warp_max(mx);
    float sum = 0.0f;
    for (int k = lane; k < len; k += kWarp) {
      float e = expf(s[k] * scale - mx);
      s[k] = e;
      sum += e;
    }
    const float inv = 1.0f / warp_sum(sum);
    for (int k = lane; k < len; k += kWarp) s[k] *= inv;
    for (int k = len + lane; k < Tk; k += kWarp) s[k] = 0.0f;
  }
}

// grad = scale * p * (dp - sum_k dp * p), in place over grad (each lane rewrites only what it read).
__global__ void attention_softmax_backward_kernel(float* grad, const float* probs, int64_t rows, int Tk,
                                                  float scale) {
  const int lane = threadIdx.x % kWarp;
  for (int64_t r = blockIdx.x * int64_t{kRowsPerBlock} + threadIdx.x / kWarp; r < rows;
       r += int64_t{gridDim.x} * kRowsPerBlock) {
    float* g = grad + r * Tk;
    const float* p = probs + r * Tk;
    float dot = 0.0f;
    for (int k = lane; k < Tk; k += kWarp) dot += g[k] * p[k];
    dot = warp_sum(dot);
    for (int k = lane; k < Tk; k += kWarp) g[k] = scale * p[k] * (g[k] - dot);
  }
}

__global__ void log_softmax_kernel(float* x, int64_t N, int V) {
  __shared__ float shared_max[kWarp], shared_sum[kWarp];
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {
    float* row = x + i * V;
    OnlineSoftmax acc;
    for (int k = threadIdx.x; k < V; k += blockDim.x) acc.add(row[k]);
    acc = block_merge(acc, shared_max, shared_sum);
    const float shift = acc.max + logf(acc.sum);
    for (int k = threadIdx.x; k < V; k += blockDim.x) row[k] -= shift;
    __syncthreads();  // the shared arrays are reused by the next row
  }
}

}  // namespace

void CudaBackend::attention_softmax_forward(float* scores, const int32_t* key_lengths, int B, int H, int Tq,
                                            int Tk, float scale, bool causal, int query_offset) {
  const int64_t rows = int64_t{B} * H * Tq;
  if (rows <= 0 || Tk <= 0) return;
  attention_softmax_forward_kernel<<<grid_for(rows, kRowsPerBlock), kBlock, 0, stream_.get()>>>(
      scores, key_lengths, H, Tq, Tk, rows, scale, causal, query_offset);
  TT_CUDA_CHECK_LAUNCH();
}

void CudaBackend::attention_softmax_backward(float* grad, const float* probs, int B, int H, int Tq, int Tk,
                                             float scale) {
  const int64_t rows = int64_t{B} * H * Tq;
  if (rows <= 0 || Tk <= 0) return;
  attention_softmax_backward_kernel<<<grid_for(rows, kRowsPerBlock), kBlock, 0, stream_.get()>>>(grad, probs, rows,
                                                                                               Tk, scale);
  TT_CUDA_CHECK_LAUNCH();
}

void CudaBackend::log_softmax(float* x, int64_t N, int V) {
  if (N <= 0 || V <= 0) return;
  log_softmax_kernel<<<grid_for(N, 1), kVocabBlock, 0, stream_.get()>>>(x, N, V);
  TT_CUDA_CHECK_LAUNCH();
}

}  // namespace tt::backend
