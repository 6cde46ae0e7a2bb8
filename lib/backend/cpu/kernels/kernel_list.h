// Every per-ISA kernel of the CPU backend, written once as X(return type, name, (parameters)):
// kernel_table.h makes the list the dispatch table's members, kernel_functions.h each variant's
// declarations, kernel_table.cpp each variant's table. Semantics in backend/backend.h (the same argument
// order, after the KernelContext). A uint16_t* after an output (y16, dx16, ...): null, or where that output
// goes rounded to bf16 as convert_to_bf16 would round it, written while each row is in cache (the kept copy
// a bf16 product reads: CpuBackend::bf16_output_copy). Comments inside the list are block comments: a line
// comment would swallow the line after its backslash.
#pragma once

#define TT_CPU_KERNELS(X) \
  X(void, add_bias, (const KernelContext& ctx, float* y, const float* x, const float* bias, int64_t N, int D)) \
  X(void, bias_backward, (const KernelContext& ctx, float* dbias, const float* dy, int64_t N, int D)) \
  X(void, add, (const KernelContext& ctx, float* y, const float* a, const float* b, int64_t n)) \
  X(void, axpy, (const KernelContext& ctx, float* y, float alpha, const float* x, int64_t n)) \
  X(void, scale, (const KernelContext& ctx, float* x, float alpha, int64_t n)) \
  X(double, sum_squares, (const KernelContext& ctx, const float* x, int64_t n)) \
  X(void, bias_relu_dropout_forward, (const KernelContext& ctx, float* y, uint16_t* y16, const float* x, \
      const float* bias, int64_t N, int F, float p, DropoutKey key)) \
  X(void, bias_activation_forward, (const KernelContext& ctx, float* y, const float* x, const float* bias, \
      int64_t N, int F, Activation a)) \
  X(void, relu_dropout_backward, (const KernelContext& ctx, float* dx, uint16_t* dx16, const float* dy, \
      const float* y, int64_t n, float p)) \
  /* the bf16-storage variant: y stored in bf16; dbias (may be null) += column sums of dx */ \
  X(void, relu_dropout_backward_bf16, (const KernelContext& ctx, float* dx, uint16_t* dx16, float* dbias, \
      const float* dy, const uint16_t* y16, int64_t N, int F, float p)) \
  X(void, dropout_add_forward, (const KernelContext& ctx, float* y, const float* residual, const float* x, \
      int64_t n, float p, DropoutKey key)) \
  X(void, dropout_forward, (const KernelContext& ctx, float* y, uint16_t* y16, const float* x, int64_t n, float p, \
      DropoutKey key)) \
  X(void, dropout_backward, (const KernelContext& ctx, float* dx, uint16_t* dx16, const float* dy, int64_t n, \
      float p, DropoutKey key)) \
  X(void, layer_norm_forward, (const KernelContext& ctx, float* y, uint16_t* y16, float* mean, float* rstd, \
      const float* x, const float* gamma, const float* beta, int64_t N, int D, float eps)) \
  X(void, layer_norm_backward, (const KernelContext& ctx, float* dx, float* dgamma, float* dbeta, const float* dy, \
      const float* x, const float* mean, const float* rstd, const float* gamma, int64_t N, int D)) \
  X(void, residual_layer_norm_forward, (const KernelContext& ctx, float* y, uint16_t* y16, float* sum, float* mean, \
      float* rstd, uint8_t* mask, const float* x, const float* bias, const float* residual, const float* gamma, \
      const float* beta, int64_t N, int D, float eps, float p, DropoutKey key)) \
  /* dx null: dx goes to dx16 only (bf16 storage) */ \
  X(void, residual_layer_norm_backward, (const KernelContext& ctx, float* dres, float* dx, uint16_t* dx16, \
      float* dgamma, float* dbeta, float* dbias, const float* dy, const float* sum, const float* mean, \
      const float* rstd, const uint8_t* mask, const float* gamma, int64_t N, int D, float p, DropoutKey key)) \
  X(void, attention_softmax_forward, (const KernelContext& ctx, float* scores, uint16_t* scores16, \
      const int32_t* key_lengths, int B, int H, int Tq, int Tk, float scale, bool causal, int query_offset)) \
  X(void, attention_softmax_backward, (const KernelContext& ctx, float* grad, uint16_t* grad16, const float* probs, \
      int B, int H, int Tq, int Tk, float scale)) \
  /* a.flags, a [B, H, Tq, Tk] byte mask (may be null): the dropout flags forward draws, backward reads */ \
  X(void, attention_forward, (const KernelContext& ctx, const AttentionForwardArgs& a)) \
  X(void, attention_backward, (const KernelContext& ctx, const AttentionBackwardArgs& a)) \
  X(void, embedding_forward, (const KernelContext& ctx, float* y, const int32_t* ids, const float* table, \
      const float* positions, float scale, int B, int T, int D, int position_offset)) \
  X(void, embedding_backward, (const KernelContext& ctx, float* dtable, const float* dy, const int32_t* ids, \
      float scale, int64_t N, int D)) \
  X(void, positions_backward, (const KernelContext& ctx, float* dpositions, const float* dy, int B, int T, int D)) \
  /* grad16: null, or [N, V] receiving the gradient rounded to bf16 as convert_to_bf16 would (fused) */ \
  X(void, cross_entropy_forward_backward, (const KernelContext& ctx, float* loss, float* nll, float* logits, \
      uint16_t* grad16, const int32_t* targets, int64_t N, int V, float eps, int32_t ignore_id, float grad_scale)) \
  X(void, log_softmax, (const KernelContext& ctx, float* x, int64_t N, int V)) \
  X(void, adam_step, (const KernelContext& ctx, float* param, float* m, float* v, const float* grad, int64_t n, \
      float lr, float beta1, float beta2, float eps, float weight_decay, int64_t step, uint16_t* param_bf16)) \
  /* not in backend.h: the bf16 products' operand conversion (gemm_bf16.cpp). y = bf16(x), x a [batch1, batch2] \
     grid of [rows, cols] matrices at strides s, y the same grid stored densely */ \
  X(void, convert_to_bf16, (const KernelContext& ctx, uint16_t* y, const float* x, int batch1, int batch2, \
      int64_t rows, int64_t cols, MatrixStrides s)) \
  /* the same of x + bias, bias [batch2 * cols]: column c of matrix (i1, i2) adds bias[i2 * cols + c] */ \
  X(void, convert_to_bf16_with_bias, (const KernelContext& ctx, uint16_t* y, const float* x, const float* bias, \
      int batch1, int batch2, int64_t rows, int64_t cols, MatrixStrides s)) \
  X(void, gather_rows, (const KernelContext& ctx, float* dst, const float* src, const int32_t* index, int64_t N, \
      int64_t D)) \
  X(void, scatter_rows, (const KernelContext& ctx, float* dst, const float* src, const int32_t* index, int64_t N, \
      int64_t D)) \
  X(void, attention_decode, (const KernelContext& ctx, float* out, int64_t ldc, float* probs, const float* q, \
      int64_t ldq, const float* k, const float* v, int64_t ld, const int32_t* key_rows, const int32_t* key_counts, \
      int rows, int max_keys, int H, int Dh, float scale)) \
  X(void, topk, (const KernelContext& ctx, float* values, int32_t* indices, const float* x, int64_t rows, int V, \
      int k)) \
  X(void, log_softmax_topk, (const KernelContext& ctx, float* values, int32_t* indices, float* shift, \
      const float* x, int64_t rows, int V, int k)) \
  /* not in backend.h: the int8 products' quantization (kernels/quantize.cpp, packed_gemm.cpp) */ \
  X(void, quantize_rows_s8, (const KernelContext& ctx, int8_t* q, float* scales, const float* x, int64_t rows, \
      int K, int64_t ldx, int levels, bool shift_to_u8)) \
  X(void, dequantize_s32, (const KernelContext& ctx, float* C, int64_t ldc, const int32_t* acc, int rows, \
      int width, const int32_t* col_offsets, const float* row_scales, const float* col_scales))
