// The CPU backend's loop kernels, compiled once per instruction set (baseline x86-64, AVX2+FMA,
// AVX-512) and chosen at run time by what the processor supports — as oneDNN does for its GEMMs —
// so one binary runs everywhere and uses the best vector unit it finds. Never -march=native.
//
// Each variant lives in its own namespace (cpu::baseline, cpu::avx2, cpu::avx512) and shares no
// symbol with the others: its helpers have internal linkage, and a test checks the objects define no
// weak (shared) symbols a linker could mix up between variants.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace tt::backend::cpu {

// What a kernel needs from its backend: the thread budget and scratch memory (backend-owned).
struct KernelContext {
  int threads = 1;
  void* owner = nullptr;
  float* (*scratch)(void* owner, size_t n) = nullptr;  // at least n floats, valid until the next call
};

// One instruction set's kernels (semantics in backend/backend.h; the same argument order, after ctx).
// A uint16_t* after an output (y16, dx16, ...): null, or where that output goes rounded to bf16 as
// convert_to_bf16 would round it, written while each row is in cache (the kept copy a bf16 product reads:
// CpuBackend::bf16_output_copy).
struct KernelTable {
  const char* isa;
  void (*add_bias)(const KernelContext&, float* y, const float* x, const float* bias, int64_t N, int D);
  void (*bias_backward)(const KernelContext&, float* dbias, const float* dy, int64_t N, int D);
  void (*add)(const KernelContext&, float* y, const float* a, const float* b, int64_t n);
  void (*axpy)(const KernelContext&, float* y, float alpha, const float* x, int64_t n);
  void (*scale)(const KernelContext&, float* x, float alpha, int64_t n);
  double (*sum_squares)(const KernelContext&, const float* x, int64_t n);
  void (*bias_relu_dropout_forward)(const KernelContext&, float* y, uint16_t* y16, const float* x, const float* bias, int64_t N,
                                    int F, float p, DropoutKey key);
  void (*bias_activation_forward)(const KernelContext&, float* y, const float* x, const float* bias, int64_t N, int F,
                                  Activation a);
  void (*relu_dropout_backward)(const KernelContext&, float* dx, uint16_t* dx16, const float* dy, const float* y, int64_t n, float p);
  void (*relu_dropout_backward_bf16)(const KernelContext&, float* dx, uint16_t* dx16, const float* dy, const uint16_t* y16,
                                     int64_t n, float p);
  void (*dropout_add_forward)(const KernelContext&, float* y, const float* residual, const float* x, int64_t n,
                              float p, DropoutKey key);
  void (*dropout_forward)(const KernelContext&, float* y, uint16_t* y16, const float* x, int64_t n, float p, DropoutKey key);
  void (*dropout_backward)(const KernelContext&, float* dx, uint16_t* dx16, const float* dy, int64_t n, float p, DropoutKey key);
  void (*layer_norm_forward)(const KernelContext&, float* y, uint16_t* y16, float* mean, float* rstd, const float* x,
                             const float* gamma, const float* beta, int64_t N, int D, float eps);
  void (*layer_norm_backward)(const KernelContext&, float* dx, float* dgamma, float* dbeta, const float* dy,
                              const float* x, const float* mean, const float* rstd, const float* gamma, int64_t N,
                              int D);
  void (*residual_layer_norm_forward)(const KernelContext&, float* y, uint16_t* y16, float* sum, float* mean, float* rstd,
                                      uint8_t* mask, const float* x, const float* bias, const float* residual,
                                      const float* gamma, const float* beta, int64_t N, int D, float eps, float p,
                                      DropoutKey key);
  void (*residual_layer_norm_backward)(const KernelContext&, float* dres, float* dx, uint16_t* dx16, float* dgamma, float* dbeta,
                                       float* dbias, const float* dy, const float* sum, const float* mean,
                                       const float* rstd, const uint8_t* mask, const float* gamma, int64_t N, int D,
                                       float p, DropoutKey key);
  void (*attention_softmax_forward)(const KernelContext&, float* scores, uint16_t* scores16, const int32_t* key_lengths, int B, int H,
                                    int Tq, int Tk, float scale, bool causal, int query_offset);
  void (*attention_softmax_backward)(const KernelContext&, float* grad, uint16_t* grad16, const float* probs, int B, int H, int Tq,
                                     int Tk, float scale);
  void (*attention_forward)(const KernelContext&, const AttentionForwardArgs& a);
  void (*attention_backward)(const KernelContext&, const AttentionBackwardArgs& a);
  void (*embedding_forward)(const KernelContext&, float* y, const int32_t* ids, const float* table,
                            const float* positions, float scale, int B, int T, int D, int position_offset);
  void (*embedding_backward)(const KernelContext&, float* dtable, const float* dy, const int32_t* ids, float scale,
                             int64_t N, int D);
  void (*positions_backward)(const KernelContext&, float* dpositions, const float* dy, int B, int T, int D);
  void (*cross_entropy_forward_backward)(const KernelContext&, float* loss, float* nll, float* logits,
                                         uint16_t* grad16, const int32_t* targets, int64_t N, int V, float eps,
                                         int32_t ignore_id, float grad_scale);
  void (*log_softmax)(const KernelContext&, float* x, int64_t N, int V);
  void (*adam_step)(const KernelContext&, float* param, float* m, float* v, const float* grad, int64_t n, float lr,
                    float beta1, float beta2, float eps, float weight_decay, int64_t step);
  // Not in backend.h: the bf16 products' operand conversion (gemm_bf16.cpp). y = bf16(x), x a [batch1,
  // batch2] grid of [rows, cols] matrices at strides s, y the same grid stored densely.
  void (*convert_to_bf16)(const KernelContext&, uint16_t* y, const float* x, int batch1, int batch2, int64_t rows,
                          int64_t cols, MatrixStrides s);
  void (*gather_rows)(const KernelContext&, float* dst, const float* src, const int32_t* index, int64_t N, int64_t D);
  void (*attention_decode)(const KernelContext&, float* ctx, int64_t ldc, float* probs, const float* q, int64_t ldq,
                           const float* k, const float* v, int64_t ld, const int32_t* key_rows,
                           const int32_t* key_counts, int rows, int max_keys, int H, int Dh, float scale);
  void (*topk)(const KernelContext&, float* values, int32_t* indices, const float* x, int64_t rows, int V, int k);
  void (*log_softmax_topk)(const KernelContext&, float* values, int32_t* indices, float* shift, const float* x,
                           int64_t rows, int V, int k);
  // Not in backend.h: the int8 products' quantization (kernels/quantize.cpp, packed_gemm.cpp).
  void (*quantize_rows_s8)(const KernelContext&, int8_t* q, float* scales, const float* x, int64_t rows, int K,
                           int64_t ldx, int levels);
  void (*dequantize_s32)(const KernelContext&, float* C, int64_t ldc, const int32_t* acc, int rows, int width,
                         const float* row_scales, const float* col_scales);
};

namespace baseline { extern const KernelTable kernel_table; }
namespace avx2 { extern const KernelTable kernel_table; }
namespace avx512 { extern const KernelTable kernel_table; }

// "auto": the best the processor supports; or "baseline", "avx2", "avx512" (tests; an unsupported or
// unknown name is a tt::ConfigError).
const KernelTable& select_kernels(const std::string& isa = "auto");
// The instruction sets this processor can run, best last.
std::vector<std::string> supported_isas();

}  // namespace tt::backend::cpu
