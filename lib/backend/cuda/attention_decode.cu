// Decoding attention: one query per row over keys addressed by row number (beam search's KV caches, which
// hypotheses share and reorder through key_rows instead of copying).
//   q: [rows, H*Dh] (row stride ldq)   k, v: [*, H*Dh] (row stride ld)   key_rows: [rows, max_keys]
//   key_counts: [rows]   ctx: [rows, H*Dh] (row stride ldc)   probs: [rows, H, max_keys] or null
//
// One block per (row, head): the scaled query sits in shared memory; each warp takes every kWarps-th key,
// its lanes splitting Dh, for the scores (kept in shared memory); a block max and sum give the softmax;
// then each warp sums its keys' p * v with lanes over Dh in registers, and the warps' partial sums are
// added in a fixed order. The work split depends only on the block size and the row's own key count, so
// a row's bits do not depend on the other rows.
#include <cuda_runtime.h>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernel_utils.h"
#include "util/check.h"
#include "util/error.h"

namespace tt::backend {

using namespace cuda_kernels;

namespace {

constexpr int kDecodeBlock = 128;
constexpr int kDecodeWarps = kDecodeBlock / kWarp;
constexpr int kMaxChunks = 8;  // context accumulators per lane: Dh <= 256
constexpr int kMaxHeadDim = kMaxChunks * kWarp;

// Shared memory of one block: scores[max_keys], query[Dh], partial[kDecodeWarps][Dh].
size_t decode_shared_bytes(int max_keys, int Dh) {
  return (static_cast<size_t>(max_keys) + static_cast<size_t>(Dh) * (1 + kDecodeWarps)) * sizeof(float);
}

__global__ void attention_decode_kernel(float* ctx, int64_t ldc, float* probs, const float* q, int64_t ldq,
                                        const float* k, const float* v, int64_t ld, const int32_t* key_rows,
                                        const int32_t* key_counts, int rows, int max_keys, int H, int Dh,
                                        float scale) {
  extern __shared__ float shared[];
  float* scores = shared;
  float* query = scores + max_keys;
  float* partial = query + Dh;
  __shared__ float reduce[kWarp];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;

  for (int64_t item = blockIdx.x; item < int64_t{rows} * H; item += gridDim.x) {
    const int r = static_cast<int>(item / H), h = static_cast<int>(item % H);
    const int count = min(key_counts[r], max_keys);
    const int32_t* keys = key_rows + int64_t{r} * max_keys;
    const int64_t column = int64_t{h} * Dh;
    float* out = ctx + r * ldc + column;
    float* p_out = probs ? probs + item * max_keys : nullptr;
    if (count <= 0) {  // outside the contract (key_counts >= 1): zeros rather than 0/0
      for (int d = threadIdx.x; d < Dh; d += blockDim.x) out[d] = 0.0f;
      if (p_out)
        for (int j = threadIdx.x; j < max_keys; j += blockDim.x) p_out[j] = 0.0f;
      continue;
    }

    for (int d = threadIdx.x; d < Dh; d += blockDim.x) query[d] = scale * q[r * ldq + column + d];
    __syncthreads();

    float local_max = -INFINITY;
    for (int j = warp; j < count; j += kDecodeWarps) {
      const float* key = k + int64_t{keys[j]} * ld + column;
      float dot = 0.0f;
      for (int d = lane; d < Dh; d += kWarp) dot += query[d] * key[d];
      dot = warp_sum(dot);
      if (lane == 0) scores[j] = dot;
      local_max = fmaxf(local_max, dot);
    }
    const float mx = block_max(local_max, reduce);  // its barrier also publishes scores[]

    float local_sum = 0.0f;
    for (int j = threadIdx.x; j < count; j += blockDim.x) {
      const float e = expf(scores[j] - mx);
      scores[j] = e;
      local_sum += e;
    }
    const float inv = 1.0f / block_sum(local_sum, reduce);
    for (int j = threadIdx.x; j < count; j += blockDim.x) scores[j] *= inv;
    __syncthreads();
    if (p_out)
      for (int j = threadIdx.x; j < max_keys; j += blockDim.x) p_out[j] = j < count ? scores[j] : 0.0f;

    float acc[kMaxChunks];
    for (int c = 0; c < kMaxChunks; ++c) acc[c] = 0.0f;
    for (int j = warp; j < count; j += kDecodeWarps) {
      const float p = scores[j];
      const float* value = v + int64_t{keys[j]} * ld + column;
#pragma unroll
      for (int c = 0; c < kMaxChunks; ++c) {
        const int d = c * kWarp + lane;
        if (d < Dh) acc[c] += p * value[d];
      }
    }
#pragma unroll
    for (int c = 0; c < kMaxChunks; ++c) {
      const int d = c * kWarp + lane;
      if (d < Dh) partial[warp * Dh + d] = acc[c];
    }
    __syncthreads();
    for (int d = threadIdx.x; d < Dh; d += blockDim.x) {
      float sum = 0.0f;
      for (int w = 0; w < kDecodeWarps; ++w) sum += partial[w * Dh + d];
      out[d] = sum;
    }
    __syncthreads();  // shared memory is reused by the next (row, head)
  }
}

}  // namespace

void CudaBackend::attention_decode(float* ctx, int64_t ldc, float* probs, const float* q, int64_t ldq,
                                   const float* k, const float* v, int64_t ld, const int32_t* key_rows,
                                   const int32_t* key_counts, int rows, int max_keys, int H, int Dh, float scale) {
  if (rows <= 0 || H <= 0 || Dh <= 0) return;
  TT_CHECK_MSG(max_keys >= 1, "attention_decode: max_keys must be at least 1");
  if (Dh > kMaxHeadDim)
    throw Error("attention_decode on " + name() + " takes a head dimension of at most " +
                    std::to_string(kMaxHeadDim) + ", got " + std::to_string(Dh),
                "use --device cpu for this model");
  const size_t shared = decode_shared_bytes(max_keys, Dh);
  if (shared > 48 * 1024) {  // beyond the default limit: opt in, up to what the device allows
    int optin = 0;
    TT_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device_));
    const size_t limit = static_cast<size_t>(optin) - kWarp * sizeof(float);  // less the static reduce[]
    if (shared > limit)
      throw Error("attention_decode on " + name() + ": " + std::to_string(max_keys) +
                      " keys per query exceed the device's shared memory",
                  "translate shorter inputs (--max-src-len), or use --device cpu");
    TT_CUDA_CHECK(cudaFuncSetAttribute(attention_decode_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(shared)));
  }
  const int64_t items = int64_t{rows} * H;
  attention_decode_kernel<<<grid_for(items, 1), kDecodeBlock, shared, stream_.get()>>>(
      ctx, ldc, probs, q, ldq, k, v, ld, key_rows, key_counts, rows, max_keys, H, Dh, scale);
  TT_CUDA_CHECK_LAUNCH();
}

}  // namespace tt::backend
