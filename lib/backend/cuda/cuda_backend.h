// CudaBackend: the Backend interface on one NVIDIA GPU (cuBLAS for products, hand-written kernels for the
// rest). All work runs in order on one stream the backend owns; host-visible results (copy_to_host,
// sum_squares) synchronise it. A plain C++ header — CUDA handle types are only forward-declared — but the
// class is created through make_cuda_backend (backend/cuda/cuda_factory.h); tt_core needs only that.
//
// Each kernel method is defined in the .cu file of the same stem as its CPU twin in backend/cpu/
// (layer_norm.cu, softmax.cu, dropout.cu, ...), so the two can be reviewed side by side.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.h"
#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/device_buffer.h"

struct CUstream_st;    // cudaStream_t is CUstream_st*
struct cublasContext;  // cublasHandle_t is cublasContext*

namespace tt::backend {

struct CudaBf16Gemm;  // cuBLASLt handle, plans, conversion buffers, held weights (gemm_bf16.h)

struct CudaStreamDeleter {
  void operator()(CUstream_st* stream) const noexcept;
};
struct CublasDeleter {
  void operator()(cublasContext* handle) const noexcept;
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device_index);  // throws tt::Error with the CUDA error text
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  Device device() const override { return Device::cuda; }
  std::string name() const override { return name_; }
  int device_index() const { return device_; }
  const CachingAllocator& allocator() const { return *allocator_; }

  // memory (cuda_backend.cu)
  void* allocate(size_t bytes) override;
  void deallocate(void* ptr, size_t bytes) noexcept override;
  void copy_from_host(void* dst, const void* host_src, size_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, size_t bytes) override;
  void copy(void* dst, const void* src, size_t bytes) override;
  void fill(float* x, float value, int64_t n) override;
  void synchronize() override;

  // gemm_bf16.cu: bf16 operands through cuBLASLt (tensor cores, fp32 accumulation); needs sm_80 or later.
  bool set_matmul_precision(MatmulPrecision p) override;
  MatmulPrecision matmul_precision() const override { return precision_; }
  void hold_bf16_weights(const float* values, int64_t n) override;
  void release_bf16_weights() override;

  // gemm.cu
  void gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int64_t lda,
            const float* B, int64_t ldb, float beta, float* C, int64_t ldc) override;
  void gemm_batched(bool trans_a, bool trans_b, int batch1, int batch2, int M, int N, int K, float alpha,
                    const float* A, MatrixStrides a, const float* B, MatrixStrides b, float beta, float* C,
                    MatrixStrides c) override;

  // elementwise.cu
  void add_bias(float* y, const float* x, const float* bias, int64_t N, int D) override;
  void bias_backward(float* dbias, const float* dy, int64_t N, int D) override;
  void add(float* y, const float* a, const float* b, int64_t n) override;
  void axpy(float* y, float alpha, const float* x, int64_t n) override;
  void scale(float* x, float alpha, int64_t n) override;
  double sum_squares(const float* x, int64_t n) override;

  // dropout.cu
  void bias_relu_dropout_forward(float* y, const float* x, const float* bias, int64_t N, int F, float p,
                                 DropoutKey key) override;
  void relu_dropout_backward(float* dx, const float* dy, const float* y, int64_t n, float p) override;
  void dropout_add_forward(float* y, const float* residual, const float* x, int64_t n, float p,
                           DropoutKey key) override;
  void dropout_forward(float* y, const float* x, int64_t n, float p, DropoutKey key) override;
  void dropout_backward(float* dx, const float* dy, int64_t n, float p, DropoutKey key) override;

  // layer_norm.cu
  void layer_norm_forward(float* y, float* mean, float* rstd, const float* x, const float* gamma,
                          const float* beta, int64_t N, int D, float eps) override;
  void layer_norm_backward(float* dx, float* dgamma, float* dbeta, const float* dy, const float* x,
                           const float* mean, const float* rstd, const float* gamma, int64_t N, int D) override;

  // softmax.cu
  void attention_softmax_forward(float* scores, const int32_t* key_lengths, int B, int H, int Tq, int Tk,
                                 float scale, bool causal, int query_offset) override;
  void attention_softmax_backward(float* grad, const float* probs, int B, int H, int Tq, int Tk,
                                  float scale) override;
  void log_softmax(float* x, int64_t N, int V) override;

  // embedding.cu
  void embedding_forward(float* y, const int32_t* ids, const float* table, const float* positions, float scale,
                         int B, int T, int D, int position_offset) override;
  void embedding_backward(float* dtable, const float* dy, const int32_t* ids, float scale, int64_t N,
                          int D) override;
  void positions_backward(float* dpositions, const float* dy, int B, int T, int D) override;

  // cross_entropy.cu
  void cross_entropy_forward_backward(float* loss, float* nll, float* logits, const int32_t* targets, int64_t N,
                                      int V, float eps, int32_t ignore_id, float grad_scale) override;

  // adam.cu
  void adam_step(float* param, float* m, float* v, const float* grad, int64_t n, float lr, float beta1,
                 float beta2, float eps, float weight_decay, int64_t step, uint16_t* param_bf16) override;

  // layout.cu
  void gather_rows(float* dst, const float* src, const int32_t* index, int64_t N, int64_t D) override;
  void scatter_rows(float* dst, const float* src, const int32_t* index, int64_t N, int64_t D) override;

  // attention_decode.cu
  void attention_decode(float* ctx, int64_t ldc, float* probs, const float* q, int64_t ldq, const float* k,
                        const float* v, int64_t ld, const int32_t* key_rows, const int32_t* key_counts, int rows,
                        int max_keys, int H, int Dh, float scale) override;
  // topk.cu (k <= 4096)
  void topk(float* values, int32_t* indices, const float* x, int64_t rows, int V, int k) override;

  // Rows per partial sum of the column reductions (bias_backward, layer_norm_backward's dgamma and dbeta).
  static constexpr int kColumnChunk = 256;

 private:
  // Column sums in two passes (elementwise.cu): per-chunk partial sums into column_scratch (grid:
  // cuda_kernels::column_grid), then add_chunk_sums adds them to `out` in chunk order.
  static int64_t column_chunks(int64_t N) { return (N + kColumnChunk - 1) / kColumnChunk; }
  float* column_scratch(size_t floats);  // grown, never shrunk
  void add_chunk_sums(float* out, const float* partial, int64_t chunks, int D);

  // bf16 products (gemm_bf16.cu), 2-D when batch1 == batch2 == 1. Returns false (nothing done) where
  // cuBLASLt offers no algorithm for the shape: the caller runs it in fp32.
  bool gemm_bf16(bool trans_a, bool trans_b, int batch1, int batch2, int M, int N, int K, float alpha,
                 const float* A, MatrixStrides a, const float* B, MatrixStrides b, float beta, float* C,
                 MatrixStrides c);
  CudaBf16Gemm& bf16_state();  // created on first use

  static constexpr int kReduceBlocks = 1024;  // fixed grid of sum_squares: deterministic summation order

  int device_;
  std::string name_;
  int sm_count_ = 1;  // multiprocessors: sizes grids of reduction kernels
  // Declaration order is destruction order reversed: the allocator outlives the stream and the handle.
  std::unique_ptr<CachingAllocator> allocator_;
  std::unique_ptr<CUstream_st, CudaStreamDeleter> stream_;
  std::unique_ptr<cublasContext, CublasDeleter> cublas_;
  DeviceBuffer reduce_scratch_;  // per-block partial sums of sum_squares (doubles) + the final sum
  DeviceBuffer gemm_pointers_;  // pointer arrays of gemm_batched's general case (grows, never shrinks)
  DeviceBuffer column_scratch_;  // partial sums of the column reductions
  MatmulPrecision precision_ = MatmulPrecision::fp32;
  std::unique_ptr<CudaBf16Gemm> bf16_;  // after the allocator: its buffers go back before the allocator goes
};

}  // namespace tt::backend
