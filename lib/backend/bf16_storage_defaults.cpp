// The bf16 storage calls of the Backend base class (backend.h). The primitives throw: bf16_storage() is
// false on a backend without them, so a layer never stores an activation in bf16 there, and reaching one
// is a bug in the caller. The attention pair composes the primitives as attention_forward's default does
// (fused_defaults.cpp), with the products reading q, k and v as stored.
//   q16 [B, H, Tq, Dh], k16 and v16 [B, H, Tk, Dh] dense; probs, dropped, dprobs [B, H, Tq, Tk]
#include "backend/backend.h"

#include "backend/attention_strides.h"
#include "util/error.h"

namespace tt::backend {
namespace {

using attention_strides::dense;
using attention_strides::head_rows;
using attention_strides::heads;

[[noreturn]] void no_bf16_storage(const Backend& be, const char* call) {
  throw InternalError(std::string(call) + ": backend " + be.name() + " stores no bf16 activations");
}

}  // namespace

void Backend::round_to_bf16(uint16_t*, const float*, int, int, int64_t, int64_t, MatrixStrides) {
  no_bf16_storage(*this, "round_to_bf16");
}

void Backend::bias_relu_dropout_forward_bf16(uint16_t*, const float*, const float*, int64_t, int, float, DropoutKey) {
  no_bf16_storage(*this, "bias_relu_dropout_forward_bf16");
}

void Backend::dropout_forward_bf16(uint16_t*, const float*, int64_t, float, DropoutKey) {
  no_bf16_storage(*this, "dropout_forward_bf16");
}

void Backend::relu_dropout_backward_bf16(float*, const float*, const uint16_t*, int64_t, float) {
  no_bf16_storage(*this, "relu_dropout_backward_bf16");
}

void Backend::gemm_bf16_operand(bool, bool, int, int, int, float, const void*, int64_t, bool, const void*, int64_t,
                                bool, float, float*, int64_t) {
  no_bf16_storage(*this, "gemm_bf16_operand");
}

void Backend::gemm_batched_bf16_operand(bool, bool, int, int, int, int, int, float, const void*, MatrixStrides, bool,
                                        const void*, MatrixStrides, bool, float, float*, MatrixStrides) {
  no_bf16_storage(*this, "gemm_batched_bf16_operand");
}

void Backend::attention_forward_bf16(float* ctx, int64_t ldc, float* probs, uint16_t* dropped16, const uint16_t* q16,
                                     const uint16_t* k16, const uint16_t* v16, const int32_t* key_lengths, int B,
                                     int H, int Tq, int Tk, int Dh, float scale, bool causal, float p,
                                     DropoutKey key) {
  const MatrixStrides ps = dense(H, Tq, Tk), qs = dense(H, Tq, Dh), ks = dense(H, Tk, Dh), cs = heads(Tq, ldc, Dh);
  const int64_t n_scores = int64_t{B} * H * Tq * Tk;
  gemm_batched_bf16_operand(false, true, B, H, Tq, Tk, Dh, 1.0f, q16, qs, true, k16, ks, true, 0.0f, probs, ps);
  if (p > 0) {  // the weights after dropout exist in bf16 alone
    attention_softmax_forward(probs, key_lengths, B, H, Tq, Tk, scale, causal, 0);
    dropout_forward_bf16(dropped16, probs, n_scores, p, key);
    gemm_batched_bf16_operand(false, false, B, H, Tq, Dh, Tk, 1.0f, dropped16, ps, true, v16, ks, true, 0.0f, ctx, cs);
    return;
  }
  // The probabilities are kept before softmax produces them (it writes their copy); w v here and
  // dV = w^T dctx in backward read it.
  keep_bf16_operand(probs, n_scores);
  attention_softmax_forward(probs, key_lengths, B, H, Tq, Tk, scale, causal, 0);
  gemm_batched_bf16_operand(false, false, B, H, Tq, Dh, Tk, 1.0f, probs, ps, false, v16, ks, true, 0.0f, ctx, cs);
}

void Backend::attention_backward_bf16(float* dq, int64_t lddq, float* dk, int64_t lddk, float* dv, int64_t lddv,
                                      float* dprobs, const float* dctx, int64_t lddc, const float* probs,
                                      const uint16_t* dropped16, const uint16_t* q16, const uint16_t* k16,
                                      const uint16_t* v16, int B, int H, int Tq, int Tk, int Dh, float scale,
                                      float p, DropoutKey key) {
  const MatrixStrides ps = dense(H, Tq, Tk), qs = dense(H, Tq, Dh), ks = dense(H, Tk, Dh), dcs = heads(Tq, lddc, Dh);
  const int64_t n_scores = int64_t{B} * H * Tq * Tk;
  keep_bf16_operand(dctx, head_rows(B, Tq, lddc, H, Dh));
  // dW = dctx V^T ; dV = W^T dctx
  gemm_batched_bf16_operand(false, true, B, H, Tq, Tk, Dh, 1.0f, dctx, dcs, false, v16, ks, true, 0.0f, dprobs, ps);
  const bool stored = p > 0;
  gemm_batched_bf16_operand(true, false, B, H, Tk, Dh, Tq, 1.0f, stored ? static_cast<const void*>(dropped16) : probs,
                            ps, stored, dctx, dcs, false, 0.0f, dv, heads(Tk, lddv, Dh));
  forget_bf16_operand(dctx);
  if (!stored) forget_bf16_operand(probs);
  if (stored) dropout_backward(dprobs, dprobs, n_scores, p, key);
  keep_bf16_operand(dprobs, n_scores);  // before its producer, as the probabilities
  attention_softmax_backward(dprobs, probs, B, H, Tq, Tk, scale);
  // dQ = dS K ; dK = dS^T Q
  gemm_batched_bf16_operand(false, false, B, H, Tq, Dh, Tk, 1.0f, dprobs, ps, false, k16, ks, true, 0.0f, dq,
                            heads(Tq, lddq, Dh));
  gemm_batched_bf16_operand(true, false, B, H, Tk, Dh, Tq, 1.0f, dprobs, ps, false, q16, qs, true, 0.0f, dk,
                            heads(Tk, lddk, Dh));
  forget_bf16_operand(dprobs);
}

}  // namespace tt::backend
