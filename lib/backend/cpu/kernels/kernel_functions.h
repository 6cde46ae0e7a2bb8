// Included by the kernel files of one instruction-set variant (compiled with -DTT_CPU_ISA=<name>):
// the kernels of that variant, and the helpers they share (internal linkage: one copy per variant).
#pragma once

#include <algorithm>
#include <cstdint>

#include "backend/cpu/kernels/kernel_table.h"

#ifndef TT_CPU_ISA
#error "kernel files are compiled once per instruction set with -DTT_CPU_ISA=<name> (see lib/CMakeLists.txt)"
#endif

namespace tt::backend::cpu::TT_CPU_ISA {
namespace {

// Threads worth using for `work` elements of cheap streaming work: below ~32k elements a fork/join costs
// more than the loop itself.
inline int threads_for(const KernelContext& ctx, int64_t work) {
  constexpr int64_t kPerThread = 16384;
  const int64_t t = work / kPerThread;
  return static_cast<int>(t < 1 ? 1 : (t < ctx.threads ? t : ctx.threads));
}

inline float* kernel_scratch(const KernelContext& ctx, size_t n) { return ctx.scratch(ctx.owner, n); }

}  // namespace

void convert_to_bf16(const KernelContext& ctx, uint16_t* y, const float* x, int batch1, int batch2, int64_t rows,
                     int64_t cols, MatrixStrides s);
void add_bias(const KernelContext& ctx, float* y, const float* x, const float* bias, int64_t N, int D);
void bias_backward(const KernelContext& ctx, float* dbias, const float* dy, int64_t N, int D);
void add(const KernelContext& ctx, float* y, const float* a, const float* b, int64_t n);
void axpy(const KernelContext& ctx, float* y, float alpha, const float* x, int64_t n);
void scale(const KernelContext& ctx, float* x, float alpha, int64_t n);
double sum_squares(const KernelContext& ctx, const float* x, int64_t n);
void bias_relu_dropout_forward(const KernelContext& ctx, float* y, uint16_t* y16, const float* x, const float* bias, int64_t N, int F,
                               float p, DropoutKey key);
void bias_activation_forward(const KernelContext& ctx, float* y, const float* x, const float* bias, int64_t N, int F,
                             Activation a);
void relu_dropout_backward(const KernelContext& ctx, float* dx, uint16_t* dx16, const float* dy, const float* y, int64_t n, float p);
void relu_dropout_backward_bf16(const KernelContext& ctx, float* dx, uint16_t* dx16, const float* dy, const uint16_t* y16,
                                int64_t n, float p);
void dropout_add_forward(const KernelContext& ctx, float* y, const float* residual, const float* x, int64_t n, float p,
                         DropoutKey key);
void dropout_forward(const KernelContext& ctx, float* y, uint16_t* y16, const float* x, int64_t n, float p, DropoutKey key);
void dropout_backward(const KernelContext& ctx, float* dx, uint16_t* dx16, const float* dy, int64_t n, float p, DropoutKey key);
void layer_norm_forward(const KernelContext& ctx, float* y, uint16_t* y16, float* mean, float* rstd, const float* x,
                        const float* gamma, const float* beta, int64_t N, int D, float eps);
void layer_norm_backward(const KernelContext& ctx, float* dx, float* dgamma, float* dbeta, const float* dy,
                         const float* x, const float* mean, const float* rstd, const float* gamma, int64_t N, int D);
void residual_layer_norm_forward(const KernelContext& ctx, float* y, uint16_t* y16, float* sum, float* mean, float* rstd, uint8_t* mask,
                                 const float* x, const float* bias, const float* residual, const float* gamma,
                                 const float* beta, int64_t N, int D, float eps, float p, DropoutKey key);
void residual_layer_norm_backward(const KernelContext& ctx, float* dres, float* dx, uint16_t* dx16, float* dgamma, float* dbeta,
                                  float* dbias, const float* dy, const float* sum, const float* mean, const float* rstd,
                                  const uint8_t* mask, const float* gamma, int64_t N, int D, float p, DropoutKey key);
void attention_softmax_forward(const KernelContext& ctx, float* scores, uint16_t* scores16, const int32_t* key_lengths, int B, int H,
                               int Tq, int Tk, float scale, bool causal, int query_offset);
void attention_softmax_backward(const KernelContext& ctx, float* grad, uint16_t* grad16, const float* probs, int B, int H, int Tq,
                                int Tk, float scale);
void attention_forward(const KernelContext& ctx, const AttentionForwardArgs& a);
void attention_backward(const KernelContext& ctx, const AttentionBackwardArgs& a);
void embedding_forward(const KernelContext& ctx, float* y, const int32_t* ids, const float* table,
                       const float* positions, float scale, int B, int T, int D, int position_offset);
void embedding_backward(const KernelContext& ctx, float* dtable, const float* dy, const int32_t* ids, float scale,
                        int64_t N, int D);
void positions_backward(const KernelContext& ctx, float* dpositions, const float* dy, int B, int T, int D);
// grad16: null, or [N, V] receiving the gradient rounded to bf16 as convert_to_bf16 would (fused).
void cross_entropy_forward_backward(const KernelContext& ctx, float* loss, float* nll, float* logits,
                                    uint16_t* grad16, const int32_t* targets, int64_t N, int V, float eps,
                                    int32_t ignore_id, float grad_scale);
void log_softmax(const KernelContext& ctx, float* x, int64_t N, int V);
void adam_step(const KernelContext& ctx, float* param, float* m, float* v, const float* grad, int64_t n, float lr,
               float beta1, float beta2, float eps, float weight_decay, int64_t step);
void gather_rows(const KernelContext& ctx, float* dst, const float* src, const int32_t* index, int64_t N, int64_t D);
void attention_decode(const KernelContext& ctx, float* out, int64_t ldc, float* probs, const float* q, int64_t ldq,
                      const float* k, const float* v, int64_t ld, const int32_t* key_rows, const int32_t* key_counts,
                      int rows, int max_keys, int H, int Dh, float scale);
void topk(const KernelContext& ctx, float* values, int32_t* indices, const float* x, int64_t rows, int V, int k);
void log_softmax_topk(const KernelContext& ctx, float* values, int32_t* indices, float* shift, const float* x,
                      int64_t rows, int V, int k);
void quantize_rows_s8(const KernelContext& ctx, int8_t* q, float* scales, const float* x, int64_t rows, int K,
                      int64_t ldx, int levels);
void dequantize_s32(const KernelContext& ctx, float* C, int64_t ldc, const int32_t* acc, int rows, int width,
                    const float* row_scales, const float* col_scales);

}  // namespace tt::backend::cpu::TT_CPU_ISA
