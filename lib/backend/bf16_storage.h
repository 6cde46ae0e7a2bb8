// Activations stored only in bf16, an optional part of a device: a backend that offers it writes these seven
// calls and returns itself from Backend::bf16_storage() inside a bf16 training step.
#pragma once

#include <cstdint>
#include <string>

#include "backend/backend.h"
#include "util/error.h"

namespace tt::backend {

// Activations stored only in bf16 (halving their memory) when every reader rounds them anyway: the FFN
// hidden layer, read by fc2's two products and, for its sign, by relu_dropout_backward; attention's
// q, k, v and weights after dropout, read only by the attention products, and its context, read by the
// output projection's two products. ops/attention_composed.cpp composes attention from these calls.
class Bf16Storage {
 public:
  virtual ~Bf16Storage() = default;
  // y16 = bf16(x), rounded as a bf16 product rounds its fp32 operands: x a [batch1, batch2] grid of
  // [rows, cols] matrices at strides s, y16 dense [batch1, batch2, rows, cols] (attention's [B, T, H, Dh]
  // projections become [B, H, T, Dh]).
  // bias: null, or [batch2 * cols] added first (column c of matrix (i1, i2) adds bias[i2 * cols + c]: a
  // projection's bias, per head), so that the fp32 sum need not be written.
  virtual void round_to_bf16(uint16_t* y16, const float* x, const float* bias, int batch1, int batch2, int64_t rows,
                             int64_t cols, MatrixStrides s) = 0;
  // y16 = bf16(dropout(relu(x + bias))), the bits bias_relu_dropout_forward's output would round to;
  // nothing is written in fp32. x [N, F] is left as it is.
  virtual void bias_relu_dropout_forward_bf16(uint16_t* y16, const float* x, const float* bias, int64_t N, int F,
                                              float p, DropoutKey key) = 0;
  // y16 = bf16(dropout(x)), the bits dropout_forward's output would round to; nothing written in fp32.
  virtual void dropout_forward_bf16(uint16_t* y16, const float* x, int64_t n, float p, DropoutKey key) = 0;
  // relu_dropout_backward with y stored in bf16 (y16 > 0 exactly where y > 0, but for a y below bf16's
  // smallest subnormal, which rounds to 0 and counts as inactive); dx, dy, y16 [N, F]. dbias [F], unless
  // null, += the column sums of dx as bias_backward(dbias, dx, N, F) adds them (the same bits), taken
  // while each row is at hand instead of in a pass of its own.
  virtual void relu_dropout_backward_bf16(float* dx, float* dbias, const float* dy, const uint16_t* y16, int64_t N,
                                          int F, float p) = 0;
  // residual_layer_norm_backward (backend.h) with dx, the sub-layer output's gradient, stored only in bf16:
  // dx16 = the rounding of the dx that call assigns (read only by the sub-layer's last Linear's products),
  // everything else as that call.
  virtual void residual_layer_norm_backward_bf16(float* dres, uint16_t* dx16, float* dgamma, float* dbeta,
                                                 float* dbias, const float* dy, const float* sum, const float* mean,
                                                 const float* rstd, const uint8_t* mask, const float* gamma, int64_t N,
                                                 int D, float p, DropoutKey key) = 0;
  // gemm in bf16 precision where A (a16) or B (b16) is already bf16: that operand is read as stored, dense
  // (lda / ldb equal its stored row length); the other is an fp32 operand as in gemm. Same bits as gemm on
  // the fp32 values that round to the stored ones.
  virtual void gemm_bf16_operand(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const void* A,
                                 int64_t lda, bool a16, const void* B, int64_t ldb, bool b16, float beta, float* C,
                                 int64_t ldc) = 0;
  // gemm_batched likewise; a stored operand is dense [batch1, batch2, rows, cols] (its strides must say so).
  virtual void gemm_batched_bf16_operand(bool trans_a, bool trans_b, int batch1, int batch2, int M, int N, int K,
                                         float alpha, const void* A, MatrixStrides a, bool a16, const void* B,
                                         MatrixStrides b, bool b16, float beta, float* C, MatrixStrides c) = 0;
};

// The backend's bf16 storage, which the caller (a layer holding a bf16-stored activation) knows is on;
// reaching here without it is a bug in the caller.
inline Bf16Storage& bf16_storage_of(Backend& be, const char* call) {
  Bf16Storage* s = be.bf16_storage();
  if (!s) throw InternalError(std::string(call) + ": backend " + be.name() + " stores no bf16 activations");
  return *s;
}

}  // namespace tt::backend
