// Elementwise kernels and reductions.
//   add_bias: y, x [N, D], bias [D]        bias_backward: dbias [D] += column sums of dy [N, D]
//   add / axpy / scale: flat [n]           sum_squares: flat [n] -> double on the host
#include <climits>
#include <cstdint>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernel_utils.h"

namespace tt::backend {

using namespace cuda_kernels;

namespace {

// One block per row (grid-striding over rows), threads over the columns: no per-element division.
__global__ void add_bias_kernel(float* y, const float* x, const float* bias, int64_t N, int D) {
  for (int64_t row = blockIdx.x; row < N; row += gridDim.x) {
    for (int j = threadIdx.x; j < D; j += blockDim.x) y[row * D + j] = x[row * D + j] + bias[j];
  }
}

// The same, four columns a thread (16-byte accesses) over the flat [N, D / 4]: for D a multiple of 4, aligned
// operands and fewer than 2^31 groups of four (32-bit indices: the column is a division per element).
__global__ void add_bias4_kernel(float4* y, const float4* x, const float4* bias, uint32_t n4, uint32_t d4) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
    float4 a = x[i];
    const float4 b = bias[i % d4];
    a.x += b.x;
    a.y += b.y;
    a.z += b.z;
    a.w += b.w;
    y[i] = a;
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Column sums with a fixed summation order (deterministic, no atomics), in two passes so that a tall [N, D]
// (N = a batch's tokens, D = 512) keeps the whole GPU busy: rows go in fixed chunks of kColumnChunk; block
// (32, kRows) takes 32 adjacent columns of one chunk, thread (c, r) sums rows r, r + kRows, ... of the chunk
// in its column (coalesced across the warp), the kRows partial sums are added in shared memory, and the
// chunk's sums go to partial[chunk, :]. The second pass adds each column's chunk sums in chunk order.
constexpr int kRows = 16;

__global__ void column_partial_kernel(float* partial, const float* in, int64_t N, int D, int64_t chunks) {
  __shared__ float rows[kRows][kWarp + 1];
  for (int64_t chunk = blockIdx.y; chunk < chunks; chunk += gridDim.y) {
    const int64_t begin = chunk * CudaBackend::kColumnChunk;
    const int64_t end = min(N, begin + CudaBackend::kColumnChunk);
    for (int64_t tile = blockIdx.x; tile * kWarp < D; tile += gridDim.x) {
      const int64_t col = tile * kWarp + threadIdx.x;
      float sum = 0.0f;
      if (col < D)
        for (int64_t r = begin + threadIdx.y; r < end; r += kRows) sum += in[r * D + col];
      rows[threadIdx.y][threadIdx.x] = sum;
      __syncthreads();
      if (threadIdx.y == 0 && col < D) {
        float total = 0.0f;
        for (int r = 0; r < kRows; ++r) total += rows[r][threadIdx.x];
        partial[chunk * D + col] = total;
      }
      __syncthreads();  // `rows` is rewritten by the next tile
    }
  }
}

__global__ void add_chunk_sums_kernel(float* out, const float* partial, int64_t chunks, int D) {
  for (int64_t col = thread_index(); col < D; col += thread_stride()) {
    float total = 0.0f;
    for (int64_t c = 0; c < chunks; ++c) total += partial[c * D + col];
    out[col] += total;
  }
}

__global__ void add_kernel(float* y, const float* a, const float* b, int64_t n) {
  for (int64_t i = thread_index(); i < n; i += thread_stride()) y[i] = a[i] + b[i];
}

__global__ void axpy_kernel(float* y, float alpha, const float* x, int64_t n) {
  for (int64_t i = thread_index(); i < n; i += thread_stride()) y[i] += alpha * x[i];
}

__global__ void scale_kernel(float* x, float alpha, int64_t n) {
  for (int64_t i = thread_index(); i < n; i += thread_stride()) x[i] *= alpha;
}

// Pass 1: block b writes the double sum of squares of its grid-stride share to partials[b].
__global__ void sum_squares_kernel(double* partials, const float* x, int64_t n) {
  __shared__ double shared[kWarp];
  double sum = 0.0;
  for (int64_t i = thread_index(); i < n; i += thread_stride()) {
    double v = x[i];
    sum += v * v;
  }
  sum = block_sum(sum, shared);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// Pass 2: one block adds the partials (always the same grid, so always the same order).
__global__ void sum_partials_kernel(double* result, const double* partials, int count) {
  __shared__ double shared[kWarp];
  double sum = 0.0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) sum += partials[i];
  sum = block_sum(sum, shared);
  if (threadIdx.x == 0) *result = sum;
}

}  // namespace

void CudaBackend::add_bias(float* y, const float* x, const float* bias, int64_t N, int D) {
  if (N <= 0 || D <= 0) return;
  const int64_t n4 = N * D / 4;
  if (D % 4 == 0 && n4 <= INT32_MAX && aligned16(y) && aligned16(x) && aligned16(bias))
    add_bias4_kernel<<<grid_for(n4, kBlock), kBlock, 0, stream_.get()>>>(
        reinterpret_cast<float4*>(y), reinterpret_cast<const float4*>(x), reinterpret_cast<const float4*>(bias),
        static_cast<uint32_t>(n4), static_cast<uint32_t>(D / 4));
  else
    add_bias_kernel<<<grid_for(N, 1), kBlock, 0, stream_.get()>>>(y, x, bias, N, D);
  TT_CUDA_CHECK_LAUNCH();
}

float* CudaBackend::column_scratch(size_t floats) {
  if (column_scratch_.bytes() < floats * sizeof(float))  // stream order makes reuse of the old block safe
    column_scratch_ = DeviceBuffer(*allocator_, floats * sizeof(float));
  return static_cast<float*>(column_scratch_.data());
}

void CudaBackend::add_chunk_sums(float* out, const float* partial, int64_t chunks, int D) {
  add_chunk_sums_kernel<<<grid_for(D, kBlock), kBlock, 0, stream_.get()>>>(out, partial, chunks, D);
  TT_CUDA_CHECK_LAUNCH();
}

void CudaBackend::bias_backward(float* dbias, const float* dy, int64_t N, int D) {
  if (N <= 0 || D <= 0) return;
  const int64_t chunks = column_chunks(N);
  float* partial = column_scratch(static_cast<size_t>(chunks) * D);
  column_partial_kernel<<<column_grid(chunks, D), dim3(kWarp, kRows), 0, stream_.get()>>>(partial, dy, N, D, chunks);
  TT_CUDA_CHECK_LAUNCH();
  add_chunk_sums(dbias, partial, chunks, D);
}

void CudaBackend::add(float* y, const float* a, const float* b, int64_t n) {
  if (n <= 0) return;
  add_kernel<<<grid_for(n, kBlock), kBlock, 0, stream_.get()>>>(y, a, b, n);
  TT_CUDA_CHECK_LAUNCH();
}

void CudaBackend::axpy(float* y, float alpha, const float* x, int64_t n) {
  if (n <= 0) return;
  axpy_kernel<<<grid_for(n, kBlock), kBlock, 0, stream_.get()>>>(y, alpha, x, n);
  TT_CUDA_CHECK_LAUNCH();
}

void CudaBackend::scale(float* x, float alpha, int64_t n) {
  if (n <= 0) return;
  scale_kernel<<<grid_for(n, kBlock), kBlock, 0, stream_.get()>>>(x, alpha, n);
  TT_CUDA_CHECK_LAUNCH();
}

double CudaBackend::sum_squares(const float* x, int64_t n) {
  if (n <= 0) return 0.0;
  auto* partials = static_cast<double*>(reduce_scratch_.data());
  double* result = partials + kReduceBlocks;
  // A fixed grid (not sized by n) keeps the summation order, and so the result, independent of timing.
  sum_squares_kernel<<<kReduceBlocks, kBlock, 0, stream_.get()>>>(partials, x, n);
  TT_CUDA_CHECK_LAUNCH();
  sum_partials_kernel<<<1, 1024, 0, stream_.get()>>>(result, partials, kReduceBlocks);
  TT_CUDA_CHECK_LAUNCH();
  double host = 0.0;
  copy_to_host(&host, result, sizeof(double));
  return host;
}

}  // namespace tt::backend
