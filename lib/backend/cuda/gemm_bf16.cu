// bf16 matrix products (Backend::set_matmul_precision(bf16)) through cuBLASLt: operands rounded to bf16
// (to nearest even), multiplied on tensor cores with fp32 accumulation, written in fp32 (C may be fp32
// accumulated into with beta). The row-major contract maps onto column-major cuBLASLt as in gemm.cu:
// C^T = op(B)^T op(A)^T, so cuBLASLt's A is our B and its B our A.
//   A: [M, K] (stored [K, M] when trans_a)   B: [K, N] (stored [N, K] when trans_b)   C: [M, N]
//   batched: a [batch1, batch2] grid of these, with MatrixStrides per operand.
// Operands: a 2-D operand inside the held weights is read from their bf16 copy in place (any row stride
// that keeps its rows 16-byte aligned); every other operand is converted into a bf16 buffer whose rows
// start on 16 bytes (the conversion also packs strided views such as attention's [B, T, H, Dh] heads).
// C: written in place when one batch stride describes the grid; otherwise (heads interleaved within rows)
// the product goes to an fp32 scratch and a kernel scatters it into C, applying beta there.
#include <cuda_bf16.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <utility>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/gemm_bf16.h"
#include "backend/cuda/kernel_utils.h"

namespace tt::backend {

using namespace cuda_kernels;

namespace {

using bf16 = __nv_bfloat16;

// A bf16 operand as cuBLASLt reads it: `count` row-major matrices, row stride ld, batch stride `stride`.
struct Bf16View {
  const bf16* data;
  int64_t ld, stride;
};

// The one batch stride that walks the [batch1, batch2] grid in order, or -1 if there is none.
int64_t single_stride(MatrixStrides s, int batch1, int batch2) {
  if (batch1 == 1) return batch2 == 1 ? 0 : s.batch2;
  if (batch2 == 1) return s.batch1;
  return s.batch1 == s.batch2 * batch2 ? s.batch2 : -1;
}

bool is_dense(MatrixStrides s, int batch1, int batch2, int64_t rows, int64_t cols) {
  return s.ld == cols && (batch2 == 1 || s.batch2 == rows * cols) &&
         (batch1 == 1 || s.batch1 == int64_t{batch2} * rows * cols);
}

// The alignment (bytes, at most 256) every matrix row of an operand starts on: cuBLASLt's heuristic assumes
// 256 unless told, and an algorithm chosen for more than the truth may fault.
int64_t alignment(const void* p, int64_t ld, int64_t stride, int64_t element) {
  const uint64_t bits = reinterpret_cast<uintptr_t>(p) | static_cast<uint64_t>(ld * element) |
                        static_cast<uint64_t>(stride * element) | 256u;
  return static_cast<int64_t>(bits & (~bits + 1));
}

__global__ void to_bf16_dense_kernel(bf16* dst, const float* src, int64_t n) {
  for (int64_t i = thread_index(); i < n; i += thread_stride()) dst[i] = __float2bfloat16_rn(src[i]);
}

// The same, four values a thread (16-byte loads, 8-byte stores): the conversion is a pass over memory, and
// wider accesses keep more bytes in flight. n4 = n / 4; src 16-byte and dst 8-byte aligned.
__global__ void to_bf16_dense4_kernel(bf16* dst, const float* src, int64_t n4) {
  const auto* in = reinterpret_cast<const float4*>(src);
  auto* out = reinterpret_cast<uint2*>(dst);
  for (int64_t i = thread_index(); i < n4; i += thread_stride()) {
    const float4 v = in[i];
    const __nv_bfloat162 lo = __floats2bfloat162_rn(v.x, v.y), hi = __floats2bfloat162_rn(v.z, v.w);
    uint2 packed;
    packed.x = *reinterpret_cast<const uint32_t*>(&lo);
    packed.y = *reinterpret_cast<const uint32_t*>(&hi);
    out[i] = packed;
  }
}

void to_bf16_dense(bf16* dst, const float* src, int64_t n, cudaStream_t stream) {
  if (n % 4 == 0 && reinterpret_cast<uintptr_t>(src) % 16 == 0 && reinterpret_cast<uintptr_t>(dst) % 8 == 0)
    to_bf16_dense4_kernel<<<grid_for(n / 4, kBlock), kBlock, 0, stream>>>(dst, src, n / 4);
  else
    to_bf16_dense_kernel<<<grid_for(n, kBlock), kBlock, 0, stream>>>(dst, src, n);
}

// The packed conversion and the scatter walk a [batch1, batch2] grid of [rows, cols] matrices: blockIdx.z
// and blockIdx.y pick the matrix (striding past 65535), x the element within it. Index is 32-bit unless a
// matrix has 2^31 elements or more: a 64-bit division is emulated in about a hundred instructions, and
// dividing every element's flat index three times (as these kernels first did) cost attention's small
// products three times the product itself.
dim3 matrix_grid(int64_t per_matrix, int batch1, int batch2) {
  return dim3(grid_for(per_matrix, kBlock), static_cast<unsigned>(std::min(batch2, 65535)),
              static_cast<unsigned>(std::min(batch1, 65535)));
}

// dst: [batch1, batch2, rows, cols] with row stride ld (>= cols; the padding is never read); src: the same
// grid with strides s.
template <typename Index>
__global__ void to_bf16_packed_kernel(bf16* dst, int64_t ld, const float* src, int batch1, int batch2, Index rows,
                                      Index cols, MatrixStrides s) {
  const Index per = rows * cols, step = gridDim.x * Index(blockDim.x);
  for (int i1 = blockIdx.z; i1 < batch1; i1 += gridDim.z)
    for (int i2 = blockIdx.y; i2 < batch2; i2 += gridDim.y) {
      const float* from = src + i1 * s.batch1 + i2 * s.batch2;
      bf16* to = dst + (int64_t{i1} * batch2 + i2) * int64_t{rows} * ld;
      for (Index j = blockIdx.x * Index(blockDim.x) + threadIdx.x; j < per; j += step) {
        const Index r = j / cols, c = j - r * cols;
        to[r * ld + c] = __float2bfloat16_rn(from[r * s.ld + c]);
      }
    }
}

// C (strides s) = product ([batch1, batch2, rows, cols], row stride ld) + beta * C; C is not read when
// beta == 0.
template <typename Index>
__global__ void scatter_product_kernel(float* C, MatrixStrides s, const float* product, int64_t ld, int batch1,
                                       int batch2, Index rows, Index cols, float beta) {
  const Index per = rows * cols, step = gridDim.x * Index(blockDim.x);
  for (int i1 = blockIdx.z; i1 < batch1; i1 += gridDim.z)
    for (int i2 = blockIdx.y; i2 < batch2; i2 += gridDim.y) {
      const float* from = product + (int64_t{i1} * batch2 + i2) * int64_t{rows} * ld;
      float* to = C + i1 * s.batch1 + i2 * s.batch2;
      for (Index j = blockIdx.x * Index(blockDim.x) + threadIdx.x; j < per; j += step) {
        const Index r = j / cols, c = j - r * cols;
        const float p = from[r * ld + c];
        float* dst = to + r * s.ld + c;
        *dst = beta == 0.0f ? p : p + beta * *dst;
      }
    }
}

bool fits_32_bits(int64_t rows, int64_t cols) { return rows * cols <= INT32_MAX; }

// Row strides of the buffers tt fills itself: rows start on 16 bytes, as the tensor-core kernels like.
int64_t padded(int64_t cols, int64_t element) {
  const int64_t per_16_bytes = 16 / element;
  return (cols + per_16_bytes - 1) / per_16_bytes * per_16_bytes;
}

void grow(DeviceBuffer& buffer, CachingAllocator& allocator, size_t bytes) {
  if (buffer.bytes() < bytes) buffer = DeviceBuffer(allocator, bytes);  // stream order makes reuse safe
}

template <typename T>
void set_attribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attribute, T value) {
  TT_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, attribute, &value, sizeof value));
}

// The plan of one key (gemm_bf16.h): descriptors and the heuristic's best algorithm, if any.
std::unique_ptr<CudaBf16Gemm::Plan> make_plan(cublasLtHandle_t handle, const CudaBf16Gemm::Key& key) {
  const auto [count, m, n, k, trans_a, trans_b, lda, ldb, ldc, stride_a, stride_b, stride_c, align_a, align_b,
              align_c, beta_nonzero] = key;
  (void)beta_nonzero;  // part of the key only: C is read or not
  auto plan = std::make_unique<CudaBf16Gemm::Plan>();
  TT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  TT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a));
  TT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b));
  // Stored (column-major) shapes: op(A) is [m, k], op(B) is [k, n], C is [m, n].
  const int64_t rows_a = trans_a ? k : m, cols_a = trans_a ? m : k;
  const int64_t rows_b = trans_b ? n : k, cols_b = trans_b ? k : n;
  TT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->a, CUDA_R_16BF, rows_a, cols_a, std::max(lda, rows_a)));
  TT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->b, CUDA_R_16BF, rows_b, cols_b, std::max(ldb, rows_b)));
  TT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->c, CUDA_R_32F, m, n, std::max(ldc, m)));
  if (count > 1) {
    const auto batch = static_cast<int32_t>(count);
    const std::pair<cublasLtMatrixLayout_t, int64_t> layouts[3] = {
        {plan->a, stride_a}, {plan->b, stride_b}, {plan->c, stride_c}};
    for (const auto& [layout, stride] : layouts) {
      set_attribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, batch);
      set_attribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, stride);
    }
  }
  cublasLtMatmulPreference_t pref = nullptr;
  TT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  struct PrefGuard {
    cublasLtMatmulPreference_t p;
    ~PrefGuard() { cublasLtMatmulPreferenceDestroy(p); }
  } guard{pref};
  const uint64_t workspace = CudaBf16Gemm::kWorkspaceBytes;
  TT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                       sizeof workspace));
  const uint32_t aligns[4] = {static_cast<uint32_t>(align_a), static_cast<uint32_t>(align_b),
                              static_cast<uint32_t>(align_c), static_cast<uint32_t>(align_c)};
  const cublasLtMatmulPreferenceAttributes_t align_attrs[4] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  for (int i = 0; i < 4; ++i)
    TT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, align_attrs[i], &aligns[i], sizeof aligns[i]));
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle, plan->desc, plan->a, plan->b, plan->c, plan->c, pref, 1, &result,
                                     &returned);
  if (status == CUBLAS_STATUS_SUCCESS && returned > 0 && result.state == CUBLAS_STATUS_SUCCESS) {
    plan->algo = result.algo;
    plan->ok = true;
  }
  return plan;
}

}  // namespace

bool CudaBackend::set_matmul_precision(MatmulPrecision p) {
  if (p == MatmulPrecision::int8) return false;  // no int8 products here: refused, never fp32 in its place
  if (p == MatmulPrecision::bf16) {
    int major = 0;
    TT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_));
    if (major < 8) return false;  // bf16 tensor cores came with Ampere (sm_80)
  }
  precision_ = p;
  return true;
}

CudaBf16Gemm& CudaBackend::bf16_state() {
  if (!bf16_) {
    auto g = std::make_unique<CudaBf16Gemm>();
    cublasLtHandle_t handle = nullptr;
    TT_CUBLAS_CHECK(cublasLtCreate(&handle));
    g->handle.reset(handle);
    g->workspace = DeviceBuffer(*allocator_, CudaBf16Gemm::kWorkspaceBytes);
    bf16_ = std::move(g);
  }
  return *bf16_;
}

void CudaBackend::hold_bf16_weights(const float* values, int64_t n) {
  if (precision_ != MatmulPrecision::bf16 || n <= 0) return;
  CudaBf16Gemm& g = bf16_state();
  grow(g.weights_bf16, *allocator_, static_cast<size_t>(n) * sizeof(bf16));
  to_bf16_dense(static_cast<bf16*>(g.weights_bf16.data()), values, n, stream_.get());
  TT_CUDA_CHECK_LAUNCH();
  g.weights = values;
  g.weights_n = n;
}

void CudaBackend::release_bf16_weights() {
  if (!bf16_) return;
  bf16_->weights = nullptr;
  bf16_->weights_n = 0;
}

bool CudaBackend::gemm_bf16(bool trans_a, bool trans_b, int batch1, int batch2, int M, int N, int K, float alpha,
                            const float* A, MatrixStrides as, const float* B, MatrixStrides bs, float beta, float* C,
                            MatrixStrides cs) {
  if (K <= 0) return false;  // the fp32 path scales C
  const int64_t count = int64_t{batch1} * batch2;
  if (count > INT_MAX) return false;
  CudaBf16Gemm& g = bf16_state();

  // One operand grid of [rows, cols] matrices as bf16: the held copy in place, or converted densely.
  auto operand = [&](DeviceBuffer& buf, const float* x, int64_t rows, int64_t cols, MatrixStrides s) -> Bf16View {
    const auto at = reinterpret_cast<uintptr_t>(x), begin = reinterpret_cast<uintptr_t>(g.weights);
    if (count == 1 && g.weights && at >= begin && (at - begin) % sizeof(float) == 0) {
      const uint64_t offset = (at - begin) / sizeof(float);
      const bf16* copy = static_cast<const bf16*>(g.weights_bf16.data()) + offset;
      // Rows on 16 bytes at least (parameters start on 64): the tensor-core kernels' vector loads.
      if (offset + static_cast<uint64_t>((rows - 1) * s.ld + cols) <= static_cast<uint64_t>(g.weights_n) &&
          alignment(copy, s.ld, 0, 2) >= 16)
        return {copy, s.ld, 0};
    }
    const int64_t n = count * rows * cols, ld = padded(cols, 2);
    grow(buf, *allocator_, static_cast<size_t>(count * rows * ld) * sizeof(bf16));
    auto* dst = static_cast<bf16*>(buf.data());
    if (ld == cols && is_dense(s, batch1, batch2, rows, cols))
      to_bf16_dense(dst, x, n, stream_.get());
    else if (fits_32_bits(rows, cols))
      to_bf16_packed_kernel<uint32_t><<<matrix_grid(rows * cols, batch1, batch2), kBlock, 0, stream_.get()>>>(
          dst, ld, x, batch1, batch2, static_cast<uint32_t>(rows), static_cast<uint32_t>(cols), s);
    else
      to_bf16_packed_kernel<int64_t><<<matrix_grid(rows * cols, batch1, batch2), kBlock, 0, stream_.get()>>>(
          dst, ld, x, batch1, batch2, rows, cols, s);
    TT_CUDA_CHECK_LAUNCH();
    return {dst, ld, rows * ld};
  };
  const Bf16View a = operand(g.a_buf, A, trans_a ? K : M, trans_a ? M : K, as);
  const Bf16View b = operand(g.b_buf, B, trans_b ? N : K, trans_b ? K : N, bs);

  const int64_t c_stride = single_stride(cs, batch1, batch2);
  const bool scatter = c_stride < 0;
  float* out = C;
  int64_t ldc = cs.ld, stride_c = c_stride;
  float beta_run = beta;
  if (scatter) {
    ldc = padded(N, 4);
    stride_c = M * ldc;
    grow(g.c_buf, *allocator_, static_cast<size_t>(count * stride_c) * sizeof(float));
    out = static_cast<float*>(g.c_buf.data());
    beta_run = 0.0f;
  }

  // Column-major: cuBLASLt's (m, n) = our (N, M), its A = our B.
  const CudaBf16Gemm::Key key{count, N, M, K, trans_b, trans_a, b.ld, a.ld, ldc, b.stride, a.stride, stride_c,
                              alignment(b.data, b.ld, b.stride, 2), alignment(a.data, a.ld, a.stride, 2),
                              alignment(out, ldc, stride_c, 4), beta_run != 0.0f};
  auto it = g.plans.find(key);
  if (it == g.plans.end()) {
    if (g.plans.size() >= CudaBf16Gemm::kMaxPlans) g.plans.clear();
    it = g.plans.emplace(key, make_plan(g.handle.get(), key)).first;
  }
  const CudaBf16Gemm::Plan& plan = *it->second;
  if (!plan.ok) return false;
  TT_CUBLAS_CHECK(cublasLtMatmul(g.handle.get(), plan.desc, &alpha, b.data, plan.a, a.data, plan.b, &beta_run, out,
                                 plan.c, out, plan.c, &plan.algo, g.workspace.data(), CudaBf16Gemm::kWorkspaceBytes,
                                 stream_.get()));
  if (scatter) {
    const dim3 grid = matrix_grid(int64_t{M} * N, batch1, batch2);
    if (fits_32_bits(M, N))
      scatter_product_kernel<uint32_t><<<grid, kBlock, 0, stream_.get()>>>(
          C, cs, out, ldc, batch1, batch2, static_cast<uint32_t>(M), static_cast<uint32_t>(N), beta);
    else
      scatter_product_kernel<int64_t><<<grid, kBlock, 0, stream_.get()>>>(C, cs, out, ldc, batch1, batch2, M, N,
                                                                          beta);
    TT_CUDA_CHECK_LAUNCH();
  }
  return true;
}

}  // namespace tt::backend
