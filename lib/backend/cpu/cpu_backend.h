// The CPU backend: GEMMs through oneDNN (dnnl_sgemm, and the cached `matmul` primitive for strided
// batched products), everything else as OpenMP loops with vectorisable inner loops.
//
// Threads (`--threads`): the count belongs to this instance. threads <= 0 means all cores
// (omp_get_num_procs()). Every tt loop runs with `num_threads(threads_)`; oneDNN reads the OpenMP
// `nthreads-var` ICV of the calling thread, so each GEMM entry point sets that ICV to threads_ just
// before calling oneDNN (the constructor sets it too): a backend may be driven from a thread other than
// the one that made it (tt-translate --workers). Both share the one GNU OpenMP runtime.
//
// No kernel allocates: per-thread partial sums live in `scratch_`, grown once to its largest size.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "backend/backend.h"
#include "backend/bf16_storage.h"
#include "backend/cpu/kernels/kernel_table.h"

namespace tt::backend::cpu {

struct MatmulCache;  // oneDNN engine, stream, matmul primitives of every type, packed weights (matmul_cache.h)
struct Bf16Gemm;     // bf16 conversion buffers, held weights (gemm_bf16.h)
class PackedGemm;    // row-invariant products against packed weights (packed_gemm.h)

class CpuBackend final : public Backend, public Bf16Storage {
 public:
  // isa: "auto" (the best this processor supports), "baseline", "avx2" or "avx512" (kernels/kernel_table.h).
  explicit CpuBackend(int threads, const std::string& isa = "auto");
  ~CpuBackend() override;
  CpuBackend(const CpuBackend&) = delete;
  CpuBackend& operator=(const CpuBackend&) = delete;

  int threads() const { return threads_; }
  const char* isa() const { return kernels_->isa; }

  Device device() const override { return Device::cpu; }
  std::string name() const override;

  void* allocate(size_t bytes) override;
  void deallocate(void* ptr, size_t bytes) noexcept override;
  void* allocate_zeroed(size_t bytes) override;
  void discard(void* ptr, size_t bytes) override;
  void copy_from_host(void* dst, const void* host_src, size_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, size_t bytes) override;
  void copy(void* dst, const void* src, size_t bytes) override;
  void fill(float* x, float value, int64_t n) override;
  void synchronize() override {}
  bool set_row_invariant(bool on) override;

  // bf16 needs bf16 instructions (avx512_core_bf16 or AMX) in oneDNN's effective ISA (gemm_bf16.cpp).
  bool set_matmul_precision(MatmulPrecision p) override;
  MatmulPrecision matmul_precision() const override { return precision_; }
  // Every fused kernel; attention at fp32 precision only: its tiles multiply in fp32, so in bf16 (training)
  // the composition's bf16 products run instead, as the mode says; int8 and bf16 decoding keep the
  // composition too, so their scores stay as they were.
  bool fuses(Fused kernel) const override {
    return kernel != Fused::attention || precision_ == MatmulPrecision::fp32;
  }
  std::string matmul_isa() const override;
  bool int8_keeps_8_bits() const override;
  // Taken in row-invariant mode at the weight's precision (packed_gemm.h), int8 only with VNNI.
  bool adopt_stored_weight(const float* slot, std::shared_ptr<const StoredWeight> w) override;
  // Shares `first`'s packed weights where both are CPU backends in row-invariant mode.
  bool share_packed_weights(Backend& first) override;
  void forget_packed(const float* values) override;
  void hold_bf16_weights(const float* values, int64_t n) override;
  void release_bf16_weights() override;
  uint16_t* bf16_weights_to_write(int64_t n) override;
  void hold_written_bf16_weights(const float* values, int64_t n) override;
  void keep_bf16_operand(const float* values, int64_t n) override;
  void forget_bf16_operand(const float* values) override;
  // bf16 storage (bf16_storage.h): itself, inside a bf16 training step (weights held).
  Bf16Storage* bf16_storage() override;
  void round_to_bf16(uint16_t* y16, const float* x, const float* bias, int batch1, int batch2, int64_t rows,
                     int64_t cols, MatrixStrides s) override;  // counted in bf16_converted()
  void bias_relu_dropout_forward_bf16(uint16_t* y16, const float* x, const float* bias, int64_t N, int F, float p,
                                      DropoutKey key) override {
    kernels_->bias_relu_dropout_forward(ctx_, nullptr, y16, x, bias, N, F, p, key);
  }
  void dropout_forward_bf16(uint16_t* y16, const float* x, int64_t n, float p, DropoutKey key) override {
    kernels_->dropout_forward(ctx_, nullptr, y16, x, n, p, key);
  }
  void relu_dropout_backward_bf16(float* dx, float* dbias, const float* dy, const uint16_t* y16, int64_t N, int F,
                                  float p) override {
    kernels_->relu_dropout_backward_bf16(ctx_, dx, bf16_output_copy(dx, N * F), dbias, dy, y16, N, F, p);
  }
  void residual_layer_norm_backward_bf16(float* dres, uint16_t* dx16, float* dgamma, float* dbeta, float* dbias,
                                         const float* dy, const float* sum, const float* mean, const float* rstd,
                                         const uint8_t* mask, const float* gamma, int64_t N, int D, float p,
                                         DropoutKey key) override {
    kernels_->residual_layer_norm_backward(ctx_, dres, nullptr, dx16, dgamma, dbeta, dbias, dy, sum, mean, rstd, mask,
                                           gamma, N, D, p, key);
  }
  void gemm_bf16_operand(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const void* A, int64_t lda,
                         bool a16, const void* B, int64_t ldb, bool b16, float beta, float* C, int64_t ldc) override;
  void gemm_batched_bf16_operand(bool trans_a, bool trans_b, int batch1, int batch2, int M, int N, int K, float alpha,
                                 const void* A, MatrixStrides a, bool a16, const void* B, MatrixStrides b, bool b16,
                                 float beta, float* C, MatrixStrides c) override;
  // Ranges kept and not yet forgotten (a layer's forward and backward leave none behind; tests).
  int64_t bf16_kept_ranges() const;
  // Operand elements converted to bf16 by a pass of their own so far (the rest came from a copy; tests).
  int64_t bf16_converted() const;

  void gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int64_t lda,
            const float* B, int64_t ldb, float beta, float* C, int64_t ldc) override;
  void gemm_batched(bool trans_a, bool trans_b, int batch1, int batch2, int M, int N, int K, float alpha,
                    const float* A, MatrixStrides a, const float* B, MatrixStrides b, float beta, float* C,
                    MatrixStrides c) override;

  void add_bias(float* y, const float* x, const float* bias, int64_t N, int D) override {
    kernels_->add_bias(ctx_, y, x, bias, N, D);
  }
  void bias_backward(float* dbias, const float* dy, int64_t N, int D) override {
    kernels_->bias_backward(ctx_, dbias, dy, N, D);
  }
  void add(float* y, const float* a, const float* b, int64_t n) override {
    kernels_->add(ctx_, y, a, b, n);
  }
  void axpy(float* y, float alpha, const float* x, int64_t n) override {
    kernels_->axpy(ctx_, y, alpha, x, n);
  }
  void scale(float* x, float alpha, int64_t n) override {
    kernels_->scale(ctx_, x, alpha, n);
  }
  double sum_squares(const float* x, int64_t n) override {
    return kernels_->sum_squares(ctx_, x, n);
  }
  void bias_relu_dropout_forward(float* y, const float* x, const float* bias, int64_t N, int F, float p, DropoutKey key) override {
    kernels_->bias_relu_dropout_forward(ctx_, y, bf16_output_copy(y, N * F), x, bias, N, F, p, key);
  }
  void bias_activation_forward(float* y, const float* x, const float* bias, int64_t N, int F, Activation a) override {
    kernels_->bias_activation_forward(ctx_, y, x, bias, N, F, a);
  }
  void relu_dropout_backward(float* dx, const float* dy, const float* y, int64_t n, float p) override {
    kernels_->relu_dropout_backward(ctx_, dx, bf16_output_copy(dx, n), dy, y, n, p);
  }
  void dropout_add_forward(float* y, const float* residual, const float* x, int64_t n, float p, DropoutKey key) override {
    kernels_->dropout_add_forward(ctx_, y, residual, x, n, p, key);
  }
  void dropout_forward(float* y, const float* x, int64_t n, float p, DropoutKey key) override {
    kernels_->dropout_forward(ctx_, y, bf16_output_copy(y, n), x, n, p, key);
  }
  void dropout_backward(float* dx, const float* dy, int64_t n, float p, DropoutKey key) override {
    kernels_->dropout_backward(ctx_, dx, bf16_output_copy(dx, n), dy, n, p, key);
  }
  void layer_norm_forward(float* y, float* mean, float* rstd, const float* x, const float* gamma, const float* beta, int64_t N, int D, float eps) override {
    kernels_->layer_norm_forward(ctx_, y, bf16_output_copy(y, N * D), mean, rstd, x, gamma, beta, N, D, eps);
  }
  void layer_norm_backward(float* dx, float* dgamma, float* dbeta, const float* dy, const float* x, const float* mean, const float* rstd, const float* gamma, int64_t N, int D) override {
    kernels_->layer_norm_backward(ctx_, dx, dgamma, dbeta, dy, x, mean, rstd, gamma, N, D);
  }
  void residual_layer_norm_forward(float* y, float* sum, float* mean, float* rstd, uint8_t* mask, const float* x,
                                   const float* bias, const float* residual, const float* gamma, const float* beta,
                                   int64_t N, int D, float eps, float p, DropoutKey key) override {
    kernels_->residual_layer_norm_forward(ctx_, y, bf16_output_copy(y, N * D), sum, mean, rstd, mask, x, bias, residual,
                                          gamma, beta, N, D, eps, p, key);
  }
  void residual_layer_norm_backward(float* dres, float* dx, float* dgamma, float* dbeta, float* dbias, const float* dy,
                                    const float* sum, const float* mean, const float* rstd, const uint8_t* mask,
                                    const float* gamma, int64_t N, int D, float p, DropoutKey key) override {
    kernels_->residual_layer_norm_backward(ctx_, dres, dx, bf16_output_copy(dx, N * D), dgamma, dbeta, dbias, dy, sum,
                                           mean, rstd, mask, gamma, N, D, p, key);
  }
  void attention_softmax_forward(float* scores, const int32_t* key_lengths, int B, int H, int Tq, int Tk, float scale, bool causal, int query_offset) override {
    kernels_->attention_softmax_forward(ctx_, scores, bf16_output_copy(scores, int64_t{B} * H * Tq * Tk), key_lengths, B,
                                        H, Tq, Tk, scale, causal, query_offset);
  }
  void attention_softmax_backward(float* grad, const float* probs, int B, int H, int Tq, int Tk, float scale) override {
    kernels_->attention_softmax_backward(ctx_, grad, bf16_output_copy(grad, int64_t{B} * H * Tq * Tk), probs, B, H, Tq,
                                         Tk, scale);
  }
  // Attention fused per head (kernels/fused_attention.cpp); row-invariant by construction. See fuses().
  void attention_forward(const AttentionForwardArgs& a) override { kernels_->attention_forward(ctx_, a); }
  void attention_backward(const AttentionBackwardArgs& a) override { kernels_->attention_backward(ctx_, a); }
  void embedding_forward(float* y, const int32_t* ids, const float* table, const float* positions, float scale, int B, int T, int D, int position_offset) override {
    kernels_->embedding_forward(ctx_, y, ids, table, positions, scale, B, T, D, position_offset);
  }
  void embedding_backward(float* dtable, const float* dy, const int32_t* ids, float scale, int64_t N, int D) override {
    kernels_->embedding_backward(ctx_, dtable, dy, ids, scale, N, D);
  }
  void positions_backward(float* dpositions, const float* dy, int B, int T, int D) override {
    kernels_->positions_backward(ctx_, dpositions, dy, B, T, D);
  }
  void cross_entropy_forward_backward(float* loss, float* nll, float* logits, const int32_t* targets, int64_t N, int V, float eps, int32_t ignore_id, float grad_scale) override;
  void log_softmax(float* x, int64_t N, int V) override {
    kernels_->log_softmax(ctx_, x, N, V);
  }
  void adam_step(float* param, float* m, float* v, const float* grad, int64_t n, float lr, float beta1, float beta2,
                 float eps, float weight_decay, int64_t step, uint16_t* param_bf16) override {
    kernels_->adam_step(ctx_, param, m, v, grad, n, lr, beta1, beta2, eps, weight_decay, step, param_bf16);
  }
  void gather_rows(float* dst, const float* src, const int32_t* index, int64_t N, int64_t D) override {
    kernels_->gather_rows(ctx_, dst, src, index, N, D);
  }
  void scatter_rows(float* dst, const float* src, const int32_t* index, int64_t N, int64_t D) override {
    kernels_->scatter_rows(ctx_, dst, src, index, N, D);
  }
  void attention_decode(float* ctx, int64_t ldc, float* probs, const float* q, int64_t ldq, const float* k,
                        const float* v, int64_t ld, const int32_t* key_rows, const int32_t* key_counts, int rows,
                        int max_keys, int H, int Dh, float scale) override {
    kernels_->attention_decode(ctx_, ctx, ldc, probs, q, ldq, k, v, ld, key_rows, key_counts, rows, max_keys, H, Dh,
                               scale);
  }
  void topk(float* values, int32_t* indices, const float* x, int64_t rows, int V, int k) override {
    kernels_->topk(ctx_, values, indices, x, rows, V, k);
  }
  void log_softmax_topk(float* values, int32_t* indices, float* shift, float* x, int64_t rows, int V, int k) override {
    kernels_->log_softmax_topk(ctx_, values, indices, shift, x, rows, V, k);  // x is left as it is
  }

 private:
  // Scratch of at least n floats, grown (never shrunk) on demand; kernels use it for partial sums.
  float* scratch(size_t n);
  static float* scratch_for(void* self, size_t n) { return static_cast<CpuBackend*>(self)->scratch(n); }
  // Threads worth using for `work` elements of cheap streaming work (avoids fork/join on tiny inputs).
  int threads_for(int64_t work) const;

  // Row-invariant paths (gemm.cpp): fixed tiles of single-threaded sgemm calls, each with >= 16 rows.
  void gemm_row_invariant(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A,
                          int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

  // bf16 products (gemm_bf16.cpp), 2-D when batch1 == batch2 == 1. Returns false (nothing done) where
  // oneDNN has no fast bf16 kernel for the shape: the caller runs it in fp32.
  // a16 / b16: that operand already in bf16 (dense), A / B then unused.
  bool gemm_bf16(bool trans_a, bool trans_b, int batch1, int batch2, int M, int N, int K, float alpha,
                 const float* A, MatrixStrides a, const float* B, MatrixStrides b, float beta, float* C,
                 MatrixStrides c, const uint16_t* a16 = nullptr, const uint16_t* b16 = nullptr);
  const uint16_t* bf16_operand(std::vector<uint16_t>& buf, const float* x, int batch1, int batch2, int64_t rows,
                               int64_t cols, MatrixStrides s);
  // Where a kernel producing the n dense values x should write their bf16 copy (fused instead of converted
  // at the next product): the kept copy when x lies in a kept range (bf16 training), else null.
  uint16_t* bf16_output_copy(const float* x, int64_t n);
  MatmulCache& matmul_cache();  // made at first use
  PackedGemm& packed_gemm();    // made at first use, in the matmul cache

  int threads_;
  const KernelTable* kernels_;
  KernelContext ctx_;
  bool row_invariant_ = false;
  std::vector<float> scratch_;
  std::unique_ptr<MatmulCache> matmul_;
  MatmulPrecision precision_ = MatmulPrecision::fp32;
  std::unique_ptr<Bf16Gemm> bf16_;
  std::mutex mapped_mutex_;
  std::set<void*> mapped_;  // allocate_zeroed's mappings (deallocate unmaps them)
};

}  // namespace tt::backend::cpu
