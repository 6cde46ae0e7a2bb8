// Matrix products through cuBLAS. The backend contract is row-major; cuBLAS is column-major. A row-major
// [M, N] matrix with row stride ldc is, read column-major, its transpose [N, M] with leading dimension ldc,
// so C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T: swap the operands (and M with N) and keep each
// operand's transpose flag.
//   A: [M, K] row-major (stored [K, M] when trans_a), B: [K, N] (stored [N, K] when trans_b), C: [M, N].
// With set_matmul_precision(bf16) both entry points go to gemm_bf16.cu (cuBLASLt) first.
#include <cublas_v2.h>

#include <climits>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernel_utils.h"
#include "util/check.h"

namespace tt::backend {

namespace {

int to_int(int64_t v) {
  TT_CHECK_MSG(v >= 0 && v <= INT_MAX, "cuBLAS takes 32-bit leading dimensions and strides");
  return static_cast<int>(v);
}

cublasOperation_t op(bool trans) { return trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

// Leading dimensions must be at least 1 even for empty or one-column operands.
int ld(int64_t v) { return v < 1 ? 1 : to_int(v); }

// Matrix (i1, i2) of each operand, for i = i1 * batch2 + i2.
__global__ void gemm_pointers_kernel(const float** a_ptrs, const float** b_ptrs, float** c_ptrs, const float* A,
                                     MatrixStrides a, const float* B, MatrixStrides b, float* C, MatrixStrides c,
                                     int batch2, int64_t count) {
  for (int64_t i = cuda_kernels::thread_index(); i < count; i += cuda_kernels::thread_stride()) {
    int64_t i1 = i / batch2, i2 = i % batch2;
    a_ptrs[i] = A + i1 * a.batch1 + i2 * a.batch2;
    b_ptrs[i] = B + i1 * b.batch1 + i2 * b.batch2;
    c_ptrs[i] = C + i1 * c.batch1 + i2 * c.batch2;
  }
}

}  // namespace

void CudaBackend::gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int64_t lda,
                       const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  if (precision_ == MatmulPrecision::bf16 &&
      gemm_bf16(trans_a, trans_b, 1, 1, M, N, K, alpha, A, {0, 0, lda}, B, {0, 0, ldb}, beta, C, {0, 0, ldc}))
    return;
  TT_CUBLAS_CHECK(cublasSgemm(cublas_.get(), op(trans_b), op(trans_a), N, M, K, &alpha, B, ld(ldb), A, ld(lda),
                              &beta, C, ld(ldc)));
}

void CudaBackend::gemm_batched(bool trans_a, bool trans_b, int batch1, int batch2, int M, int N, int K,
                               float alpha, const float* A, MatrixStrides a, const float* B, MatrixStrides b,
                               float beta, float* C, MatrixStrides c) {
  if (M <= 0 || N <= 0 || batch1 <= 0 || batch2 <= 0) return;
  if (precision_ == MatmulPrecision::bf16 &&
      gemm_bf16(trans_a, trans_b, batch1, batch2, M, N, K, alpha, A, a, B, b, beta, C, c))
    return;
  cublasHandle_t handle = cublas_.get();
  // One strided call covers the whole grid when each operand's batch1 stride is batch2 of its batch2
  // strides (dense [batch1, batch2] layout, the usual case) — or when there is only one batch1 index.
  auto flat = [&](const MatrixStrides& s) { return s.batch1 == s.batch2 * batch2; };
  if (batch1 == 1 || (flat(a) && flat(b) && flat(c))) {
    TT_CUBLAS_CHECK(cublasSgemmStridedBatched(handle, op(trans_b), op(trans_a), N, M, K, &alpha, B, ld(b.ld),
                                              b.batch2, A, ld(a.ld), a.batch2, &beta, C, ld(c.ld), c.batch2,
                                              batch1 * batch2));
    return;
  }
  // One batch dimension with any strides.
  if (batch2 == 1) {
    TT_CUBLAS_CHECK(cublasSgemmStridedBatched(handle, op(trans_b), op(trans_a), N, M, K, &alpha, B, ld(b.ld),
                                              b.batch1, A, ld(a.ld), a.batch1, &beta, C, ld(c.ld), c.batch1,
                                              batch1));
    return;
  }
  // General grid (attention straight on [B, T, H, Dh] projections: batch1 = B, batch2 = H, heads interleaved
  // within rows): one pointer-array call instead of batch1 strided calls. The pointer arrays are built on the
  // device, in stream order, so the scratch can be reused by the next call without a synchronisation.
  int64_t count = int64_t{batch1} * batch2;
  size_t bytes = static_cast<size_t>(3 * count) * sizeof(void*);
  if (gemm_pointers_.bytes() < bytes) gemm_pointers_ = DeviceBuffer(*allocator_, bytes);
  auto** pointers = static_cast<void**>(gemm_pointers_.data());
  auto** a_ptrs = static_cast<const float**>(static_cast<void*>(pointers));
  auto** b_ptrs = static_cast<const float**>(static_cast<void*>(pointers + count));
  auto** c_ptrs = static_cast<float**>(static_cast<void*>(pointers + 2 * count));
  gemm_pointers_kernel<<<cuda_kernels::grid_for(count, cuda_kernels::kBlock), cuda_kernels::kBlock, 0,
                         stream_.get()>>>(a_ptrs, b_ptrs, c_ptrs, A, a, B, b, C, c, batch2, count);
  TT_CUDA_CHECK_LAUNCH();
  TT_CUBLAS_CHECK(cublasSgemmBatched(handle, op(trans_b), op(trans_a), N, M, K, &alpha, b_ptrs, ld(b.ld), a_ptrs,
                                     ld(a.ld), &beta, c_ptrs, ld(c.ld), to_int(count)));
}

}  // namespace tt::backend
