// Matrix products through oneDNN.
//   gemm:         C[M, N] = alpha * op(A)[M, K] * op(B)[K, N] + beta * C  (row-major, dnnl_sgemm)
//   gemm_batched: the same over a [batch1, batch2] grid with arbitrary strides — one oneDNN `matmul`
//                 primitive with 4-D strided memory descriptors, created once per shape/stride key and
//                 cached here; attention runs straight on [B, T, H, Dh] projections with no transposes.
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/matmul_cache.h"
#include "util/error.h"

namespace tt::backend::cpu {
namespace {

void check_sgemm(dnnl_status_t status, int M, int N, int K) {
  if (status != dnnl_success) {
    throw InternalError("dnnl_sgemm failed with status " + std::to_string(static_cast<int>(status)) + " (M=" +
                        std::to_string(M) + ", N=" + std::to_string(N) + ", K=" + std::to_string(K) + ")");
  }
}

// C = beta * C for the degenerate K == 0 product (oneDNN's behaviour there is not documented).
void scale_matrix(float* C, int64_t ldc, int M, int N, float beta) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
}

}  // namespace

MatmulCache& CpuBackend::matmul_cache() {
  if (!matmul_) matmul_ = std::make_unique<MatmulCache>();
  return *matmul_;
}

void CpuBackend::gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int64_t lda,
                      const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    scale_matrix(C, ldc, M, N, beta);
    return;
  }
  // The calling thread's ICV, which oneDNN reads: a decoding worker's own thread starts with OpenMP's
  // default (all cores), and so does a one-thread parallel region (not "in parallel" for oneDNN).
  omp_set_num_threads(threads_);
  if (row_invariant_) {
    gemm_row_invariant(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  if (precision_ == MatmulPrecision::bf16 && gemm_bf16(trans_a, trans_b, 1, 1, M, N, K, alpha, A, {0, 0, lda}, B,
                                                        {0, 0, ldb}, beta, C, {0, 0, ldc}))
    return;
  // Weight gradients C = A^T B (dW[O, I] += dy^T x) whose operands have row strides that are multiples
  // of 4 KiB (O or I = 1024, 2048, ...) run up to 1.5x slower: oneDNN's packing then walks one cache set.
  // Copying such an operand to a stride padded by 64 bytes first costs a few per cent and measured
  // 6.05 s -> 4.23 s over the TN products of six `small` training steps (d_ff 1024). Strides of 1, 2 or
  // 3 KiB do not suffer (Zen 4, K = 2048: 256, 512, 768 within 4 %, 1024 150 -> 220 GFLOP/s on 2 threads)
  // while the copy costs 15-25 % of `tiny`'s d_ff-256 products, so they are left alone. (NN and NT
  // products showed no such effect.)
  const bool pad_a = trans_a && lda % 1024 == 0 && K >= 256;
  const bool pad_b = trans_a && !trans_b && ldb % 1024 == 0 && K >= 256;
  if (pad_a || pad_b) {
    const int64_t lda_padded = M + 16, ldb_padded = N + 16;
    const size_t a_size = pad_a ? static_cast<size_t>(K) * lda_padded : 0;
    float* buf = scratch(a_size + (pad_b ? static_cast<size_t>(K) * ldb_padded : 0));
    float* a_copy = buf;
    float* b_copy = buf + a_size;
    const int nt = threads_for(int64_t{K} * ((pad_a ? M : 0) + (pad_b ? N : 0)));
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int k = 0; k < K; ++k) {
      if (pad_a) std::memcpy(a_copy + k * lda_padded, A + k * lda, static_cast<size_t>(M) * sizeof(float));
      if (pad_b) std::memcpy(b_copy + k * ldb_padded, B + k * ldb, static_cast<size_t>(N) * sizeof(float));
    }
    if (pad_a) {
      A = a_copy;
      lda = lda_padded;
    }
    if (pad_b) {
      B = b_copy;
      ldb = ldb_padded;
    }
  }
  omp_set_num_threads(threads_);  // oneDNN sizes its parallel region from this ICV (cpu_backend.h)
  check_sgemm(dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc),
              M, N, K);
}

void CpuBackend::gemm_batched(bool trans_a, bool trans_b, int batch1, int batch2, int M, int N, int K, float alpha,
                              const float* A, MatrixStrides a, const float* B, MatrixStrides b, float beta,
                              float* C, MatrixStrides c) {
  if (batch1 <= 0 || batch2 <= 0 || M <= 0 || N <= 0) return;
  omp_set_num_threads(threads_);  // as in gemm()
  if (row_invariant_) {
    // One single-threaded M = 1 sgemm per (matrix, row): measured bit-identical whatever the number of
    // rows, and whatever zero-weight key padding extends N (scores) or K (context) — so a sentence's
    // attention does not depend on the longest sentence of its batch.
    const int64_t rows = int64_t{batch1} * batch2 * M;
    dnnl_status_t status = dnnl_success;
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = r / M, row = r % M, i1 = i / batch2, i2 = i % batch2;
      const float* Ai = A + i1 * a.batch1 + i2 * a.batch2 + (trans_a ? row : row * a.ld);
      const float* Bi = B + i1 * b.batch1 + i2 * b.batch2;
      float* Ci = C + i1 * c.batch1 + i2 * c.batch2 + row * c.ld;
      if (K <= 0) {
        scale_matrix(Ci, c.ld, 1, N, beta);
        continue;
      }
      dnnl_status_t s = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', 1, N, K, alpha, Ai, a.ld, Bi, b.ld,
                                   beta, Ci, c.ld);
      if (s != dnnl_success) {
#pragma omp critical(tt_gemm_status)
        status = s;
      }
    }
    check_sgemm(status, M, N, K);
    return;
  }
  if (precision_ == MatmulPrecision::bf16 && gemm_bf16(trans_a, trans_b, batch1, batch2, M, N, K, alpha, A, a, B, b,
                                                        beta, C, c))
    return;
  MatmulCache& cache = matmul_cache();
  const MatmulPrimitives::Key key{MatmulPrimitives::fp32, trans_a, trans_b, batch1, batch2, M, N, K,
                                  std::bit_cast<int32_t>(alpha), std::bit_cast<int32_t>(beta), a.batch1, a.batch2,
                                  a.ld, b.batch1, b.batch2, b.ld, c.batch1, c.batch2, c.ld};
  omp_set_num_threads(threads_);

  // Creating a primitive costs ~0.5 ms (measured), about as much as running it on attention shapes, so a
  // key gets one only from its second use on; single-query products (M == 1: incremental decoding, where
  // Tk grows every step and a key never recurs across steps) always take the sgemm loop.
  MatmulPrimitives::Entry* entry = cache.primitives.find(key);
  if (!entry && K > 0 && M > 1 && !cache.primitives.refused(key)) {
    if (cache.seen.size() >= MatmulCache::kMaxSeen) cache.seen.clear();
    if (++cache.seen[key] >= 2) {
      using dnnl::memory;
      using dt = memory::data_type;
      memory::dims a_strides = trans_a ? memory::dims{a.batch1, a.batch2, 1, a.ld}
                                       : memory::dims{a.batch1, a.batch2, a.ld, 1};
      memory::dims b_strides = trans_b ? memory::dims{b.batch1, b.batch2, 1, b.ld}
                                       : memory::dims{b.batch1, b.batch2, b.ld, 1};
      // Null for e.g. zero batch strides (broadcast operands) that matmul does not take: the loop below.
      entry = cache.primitives.get(key, memory::desc({batch1, batch2, M, K}, dt::f32, a_strides),
                                   memory::desc({batch1, batch2, K, N}, dt::f32, b_strides),
                                   memory::desc({batch1, batch2, M, N}, dt::f32,
                                                memory::dims{c.batch1, c.batch2, c.ld, 1}),
                                   alpha, beta);
    }
  }
  if (entry) {
    cache.primitives.run(*entry, cache.stream, A, B, C);
    return;
  }

  // The sgemm loop: one single-threaded sgemm per matrix (oneDNN runs sequentially inside a parallel
  // region), matrices spread over the threads. As fast as the matmul primitive on AVX2 hosts, where
  // oneDNN's matmul is itself gemm-based; the primitive's brgemm kernels need AVX-512.
  const int64_t count = static_cast<int64_t>(batch1) * batch2;
  dnnl_status_t status = dnnl_success;
#pragma omp parallel for num_threads(threads_) schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    const int64_t i1 = i / batch2, i2 = i % batch2;
    const float* Ai = A + i1 * a.batch1 + i2 * a.batch2;
    const float* Bi = B + i1 * b.batch1 + i2 * b.batch2;
    float* Ci = C + i1 * c.batch1 + i2 * c.batch2;
    if (K <= 0) {
      scale_matrix(Ci, c.ld, M, N, beta);
      continue;
    }
    dnnl_status_t s = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', M, N, K, alpha, Ai, a.ld, Bi, b.ld,
                                 beta, Ci, c.ld);
    if (s != dnnl_success) {
#pragma omp critical(tt_gemm_status)
      status = s;
    }
  }
  check_sgemm(status, M, N, K);
}

bool CpuBackend::set_row_invariant(bool on) {
  if (!on && matmul_ && matmul_->packed) matmul_->packed->restore_all();  // other products read the weights
  row_invariant_ = on;
  return true;
}

PackedGemm& CpuBackend::packed_gemm() {
  MatmulCache& cache = matmul_cache();
  if (!cache.packed) cache.packed = std::make_unique<PackedGemm>(cache.engine, threads_, *kernels_, ctx_);
  return *cache.packed;
}

bool CpuBackend::adopt_stored_weight(const float* slot, std::shared_ptr<const StoredWeight> w) {
  // Stored float32 weights for any precision (rounded or quantized when packed, as B's would be); stored
  // int8 / bf16 ones for their own.
  if (!row_invariant_ || (w->type != precision_ && w->type != MatmulPrecision::fp32)) return false;
  return packed_gemm().adopt(slot, std::move(w));
}

bool CpuBackend::int8_keeps_8_bits() const {
  return PackedGemm::int8_weight_levels() == QuantizedWeight::kInt8Levels;
}

bool CpuBackend::share_packed_weights(Backend& first) {
  auto* cpu = dynamic_cast<CpuBackend*>(&first);
  if (!cpu || cpu == this || !row_invariant_ || !cpu->row_invariant_) return false;
  packed_gemm().share_store_of(cpu->packed_gemm());
  return true;
}

void CpuBackend::forget_packed(const float* values) {
  if (matmul_ && matmul_->packed) matmul_->packed->forget(values);
}

// Row-invariant gemm. oneDNN's sgemm (v3, AVX-512 host, measured) gives a row bits that depend on M (one
// kernel for M = 1, another below 16 rows, another from 16 on) and, for large K, on the thread count. Every
// row here goes through a single-threaded sgemm call with at least 16 rows on a column block fixed by N
// alone (256 wide), so the bits depend only on the row, K and N: tiles are spread over threads, and an
// input of fewer than 16 rows is padded to 16. tests/backend/row_invariant_test.cpp checks this holds.
void CpuBackend::gemm_row_invariant(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A,
                                    int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  // The Linear / output-projection product x W^T: weights packed once, tiles of fixed heights (packed_gemm.h).
  if (!trans_a && trans_b && alpha == 1.0f && beta == 0.0f) {
    using Operands = PackedGemm::Operands;
    const Operands type = precision_ == MatmulPrecision::int8   ? Operands::s8
                          : precision_ == MatmulPrecision::bf16 ? Operands::bf16
                                                                : Operands::f32;
    if (packed_gemm().run(M, N, K, A, lda, B, ldb, C, ldc, type)) return;
  }
  // Not a packed product (another form, or a shape oneDNN has no kernel for): it reads B's values.
  if (matmul_ && matmul_->packed) matmul_->packed->restore(B);
  constexpr int kMinRows = 16, kChunkRows = 64, kBlockCols = 256;
  // A transposed operand is first copied to row-major rows (inference never takes this path).
  float* buf = nullptr;
  const int padded_M = std::max(M, kMinRows);
  const size_t a_size = trans_a || M < kMinRows ? static_cast<size_t>(padded_M) * K : 0;
  const size_t c_size = M < kMinRows ? static_cast<size_t>(kMinRows) * N : 0;
  if (a_size + c_size > 0) buf = scratch(a_size + c_size);
  if (a_size > 0) {
    float* a_copy = buf;
    for (int i = 0; i < padded_M; ++i)
      for (int k = 0; k < K; ++k)
        a_copy[static_cast<size_t>(i) * K + k] = i >= M ? 0.0f : trans_a ? A[k * lda + i] : A[i * lda + k];
    A = a_copy;
    lda = K;
  }
  float* C_out = C;
  const int64_t ldc_out = ldc;
  if (c_size > 0) {
    float* c_copy = buf + a_size;
    for (int i = 0; i < kMinRows; ++i)
      for (int j = 0; j < N; ++j) c_copy[static_cast<size_t>(i) * N + j] = i < M && beta != 0.0f ? C[i * ldc + j] : 0.0f;
    C = c_copy;
    ldc = N;
  }
  // Row chunks of 64; a remainder under 16 rows joins the chunk before it.
  const int rows = padded_M;
  int chunks = rows / kChunkRows;
  if (chunks == 0 || rows % kChunkRows >= kMinRows) ++chunks;
  const int blocks = (N + kBlockCols - 1) / kBlockCols;
  dnnl_status_t status = dnnl_success;
#pragma omp parallel for num_threads(std::min(threads_, chunks * blocks)) schedule(static)
  for (int tile = 0; tile < chunks * blocks; ++tile) {
    const int chunk = tile / blocks, block = tile % blocks;
    const int r0 = chunk * kChunkRows, r1 = chunk == chunks - 1 ? rows : r0 + kChunkRows;
    const int c0 = block * kBlockCols, c1 = std::min(N, c0 + kBlockCols);
    const float* Bt = B + (trans_b ? c0 * ldb : c0);
    dnnl_status_t s = dnnl_sgemm('N', trans_b ? 'T' : 'N', r1 - r0, c1 - c0, K, alpha, A + r0 * lda, lda, Bt, ldb,
                                 beta, C + r0 * ldc + c0, ldc);
    if (s != dnnl_success) {
#pragma omp critical(tt_gemm_status)
      status = s;
    }
  }
  check_sgemm(status, M, N, K);
  if (c_size > 0)
    for (int i = 0; i < M; ++i) std::memcpy(C_out + i * ldc_out, C + static_cast<size_t>(i) * N, sizeof(float) * N);
}

}  // namespace tt::backend::cpu
