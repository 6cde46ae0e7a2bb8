// Row-wise top-k (beam search's candidate selection on the device, so [rows, V] scores never go to the host).
//   x: [rows, V]   values, indices: [rows, k], best first
// Order: larger value first, ties to the lower index, NaN counts as -inf, -0 ties with +0. values[r, j] is
// x[r, indices[r, j]] as stored (a NaN stays NaN).
//
// One block per row. Each value maps to a 32-bit key whose unsigned order is the order above; a radix
// select (four 8-bit digits, MSB first, a shared histogram per digit) finds the k-th largest key T. One
// pass in index order then collects every element with key > T and the lowest-indexed elements with
// key == T (a block-wide ordered count), and the k candidates are ranked by (key, index), a total order,
// so the output does not depend on thread timing.
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernel_utils.h"
#include "util/check.h"
#include "util/error.h"

namespace tt::backend {

using namespace cuda_kernels;

namespace {

constexpr int kTopkBlock = 512;
constexpr int kTopkWarps = kTopkBlock / kWarp;
constexpr int kMaxTopk = 4096;  // candidates live in shared memory: 8 bytes each

__device__ inline uint32_t order_key(float x) {
  uint32_t u = __float_as_uint(x);
  if (x != x) u = 0xff800000u;  // NaN -> -inf
  else if (x == 0.0f) u = 0u;   // -0 -> +0
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// Warp 0 finds, walking the 256 bins from the top, the bin that holds the `remaining`-th largest key;
// writes the bin to *digit and the rank left inside it to *remaining.
__device__ inline void select_digit(const uint32_t* hist, int* remaining, uint32_t* digit) {
  if (threadIdx.x >= kWarp) return;
  const int lane = threadIdx.x;
  // Lane l owns bins 255 - 8l down to 248 - 8l.
  uint32_t own = 0;
  for (int b = 0; b < 8; ++b) own += hist[255 - 8 * lane - b];
  uint32_t before = own;  // inclusive prefix over lanes, then made exclusive
  for (int offset = 1; offset < kWarp; offset <<= 1) {
    uint32_t other = __shfl_up_sync(0xffffffffu, before, offset);
    if (lane >= offset) before += other;
  }
  before -= own;
  const uint32_t want = static_cast<uint32_t>(*remaining);
  __syncwarp();
  if (before < want && want <= before + own) {  // exactly one lane
    uint32_t cum = before;
    for (int b = 0; b < 8; ++b) {
      const int bin = 255 - 8 * lane - b;
      if (want <= cum + hist[bin]) {
        *digit = static_cast<uint32_t>(bin);
        *remaining = static_cast<int>(want - cum);
        break;
      }
      cum += hist[bin];
    }
  }
}

__global__ void topk_kernel(float* values, int32_t* indices, const float* x, int64_t rows, int V, int k) {
  extern __shared__ uint32_t candidates[];  // k keys, then k indices
  uint32_t* cand_key = candidates;
  int32_t* cand_index = reinterpret_cast<int32_t*>(candidates + k);
  __shared__ uint32_t hist[256];
  __shared__ uint32_t warp_counts[kTopkWarps];
  __shared__ uint32_t digit;
  __shared__ int remaining;
  __shared__ int n_greater;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;

  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* row = x + r * V;
    if (threadIdx.x == 0) {
      remaining = k;
      n_greater = 0;
    }
    uint32_t prefix = 0, mask = 0;
    for (int shift = 24; shift >= 0; shift -= 8) {
      for (int b = threadIdx.x; b < 256; b += blockDim.x) hist[b] = 0;
      __syncthreads();
      for (int i = threadIdx.x; i < V; i += blockDim.x) {
        const uint32_t key = order_key(row[i]);
        if ((key & mask) == prefix) atomicAdd(&hist[(key >> shift) & 255u], 1u);
      }
      __syncthreads();
      select_digit(hist, &remaining, &digit);
      __syncthreads();
      prefix |= digit << shift;
      mask |= 255u << shift;
    }
    const uint32_t threshold = prefix;  // the k-th largest key
    const int equal_needed = remaining;  // how many of the keys == threshold belong to the top k
    const int greater = k - equal_needed;

    // Collect, in index order, so that ties at the threshold keep the lowest indices.
    int equal_taken = 0;
    for (int base = 0; base < V; base += blockDim.x) {
      const int i = base + threadIdx.x;
      const uint32_t key = i < V ? order_key(row[i]) : 0u;
      if (i < V && key > threshold) {
        const int slot = atomicAdd(&n_greater, 1);
        cand_key[slot] = key;
        cand_index[slot] = i;
      }
      const bool equal = i < V && key == threshold;
      const uint32_t ballot = __ballot_sync(0xffffffffu, equal);
      if (lane == 0) warp_counts[warp] = __popc(ballot);
      __syncthreads();
      int offset = 0, total = 0;
      for (int w = 0; w < kTopkWarps; ++w) {
        if (w < warp) offset += warp_counts[w];
        total += warp_counts[w];
      }
      const int pos = equal_taken + offset + __popc(ballot & ((1u << lane) - 1u));
      if (equal && pos < equal_needed) {
        cand_key[greater + pos] = key;
        cand_index[greater + pos] = i;
      }
      equal_taken += total;
      __syncthreads();  // warp_counts is rewritten by the next chunk
    }

    // Rank each candidate among the k: (key, index) is a total order, so the ranks are a permutation.
    for (int c = threadIdx.x; c < k; c += blockDim.x) {
      const uint32_t key = cand_key[c];
      const int32_t index = cand_index[c];
      int rank = 0;
      for (int j = 0; j < k; ++j) {
        const uint32_t other = cand_key[j];
        rank += other > key || (other == key && cand_index[j] < index);
      }
      values[r * k + rank] = row[index];
      indices[r * k + rank] = index;
    }
    __syncthreads();  // the candidates and counters are reused by the next row
  }
}

}  // namespace

void CudaBackend::topk(float* values, int32_t* indices, const float* x, int64_t rows, int V, int k) {
  if (rows <= 0 || k <= 0) return;
  TT_CHECK_MSG(k <= V, "topk: k exceeds the row length");
  if (k > kMaxTopk)
    throw Error("topk on " + name() + " takes k <= " + std::to_string(kMaxTopk) + ", got " + std::to_string(k),
                "use a smaller beam, or --device cpu");
  const size_t shared = static_cast<size_t>(k) * 2 * sizeof(uint32_t);
  topk_kernel<<<grid_for(rows, 1), kTopkBlock, shared, stream_.get()>>>(values, indices, x, rows, V, k);
  TT_CUDA_CHECK_LAUNCH();
}

}  // namespace tt::backend
