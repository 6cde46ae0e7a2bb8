// The default implementations of the fused kernels (backend.h): the kernels they fuse, one after another.
// A backend with fused versions overrides them (the CPU backend does); any other gets them from its
// primitives, with the same results up to rounding.
//   attention: q, ctx rows (b, t < Tq); k, v rows (b, t < Tk); probs, dropped, dprobs [B, H, Tq, Tk]
//   residual layer norm: x, residual, sum, y [N, D]
//   log_softmax_topk: x [rows, V] (overwritten), values, indices [rows, k], shift [rows]
#include "backend/backend.h"

#include "backend/attention_strides.h"
#include "util/error.h"

namespace tt::backend {
namespace {

using attention_strides::head_rows;
using attention_strides::heads;
MatrixStrides scores(int H, int Tq, int Tk) { return attention_strides::dense(H, Tq, Tk); }

}  // namespace

void Backend::attention_forward(float* ctx, int64_t ldc, float* probs, float* dropped, const float* q, int64_t ldq,
                                const float* k, int64_t ldk, const float* v, int64_t ldv, const int32_t* key_lengths,
                                int B, int H, int Tq, int Tk, int Dh, float scale, bool causal, float p,
                                DropoutKey key) {
  const MatrixStrides ps = scores(H, Tq, Tk);
  // Each of q, k, v and the weights w feeds one product here and one in backward (forgotten there).
  keep_bf16_operand(q, head_rows(B, Tq, ldq, H, Dh));
  keep_bf16_operand(k, head_rows(B, Tk, ldk, H, Dh));
  keep_bf16_operand(v, head_rows(B, Tk, ldv, H, Dh));
  gemm_batched(false, true, B, H, Tq, Tk, Dh, 1.0f, q, heads(Tq, ldq, Dh), k, heads(Tk, ldk, Dh), 0.0f, probs, ps);
  // w is kept before the kernel that produces it (softmax, or dropout) so that the kernel may write its copy.
  const float* w = p > 0 ? dropped : probs;
  keep_bf16_operand(w, int64_t{B} * H * Tq * Tk);
  attention_softmax_forward(probs, key_lengths, B, H, Tq, Tk, scale, causal, 0);
  if (p > 0) dropout_forward(dropped, probs, int64_t{B} * H * Tq * Tk, p, key);
  gemm_batched(false, false, B, H, Tq, Dh, Tk, 1.0f, w, ps, v, heads(Tk, ldv, Dh), 0.0f, ctx, heads(Tq, ldc, Dh));
}

void Backend::attention_backward(float* dq, int64_t lddq, float* dk, int64_t lddk, float* dv, int64_t lddv,
                                 float* dprobs, const float* dctx, int64_t lddc, const float* probs,
                                 const float* dropped, const float* q, int64_t ldq, const float* k, int64_t ldk,
                                 const float* v, int64_t ldv, int B, int H, int Tq, int Tk, int Dh, float scale,
                                 float p, DropoutKey key) {
  const MatrixStrides ps = scores(H, Tq, Tk), dcs = heads(Tq, lddc, Dh);
  const float* w = p > 0 ? dropped : probs;
  const int64_t n_scores = int64_t{B} * H * Tq * Tk;
  keep_bf16_operand(dctx, head_rows(B, Tq, lddc, H, Dh));
  // dW = dctx V^T ; dV = W^T dctx
  gemm_batched(false, true, B, H, Tq, Tk, Dh, 1.0f, dctx, dcs, v, heads(Tk, ldv, Dh), 0.0f, dprobs, ps);
  gemm_batched(true, false, B, H, Tk, Dh, Tq, 1.0f, w, ps, dctx, dcs, 0.0f, dv, heads(Tk, lddv, Dh));
  forget_bf16_operand(dctx);
  forget_bf16_operand(w);
  forget_bf16_operand(v);
  if (p > 0) dropout_backward(dprobs, dprobs, n_scores, p, key);
  keep_bf16_operand(dprobs, n_scores);  // before its producer, as w
  attention_softmax_backward(dprobs, probs, B, H, Tq, Tk, scale);
  // dQ = dS K ; dK = dS^T Q
  gemm_batched(false, false, B, H, Tq, Dh, Tk, 1.0f, dprobs, ps, k, heads(Tk, ldk, Dh), 0.0f, dq, heads(Tq, lddq, Dh));
  gemm_batched(true, false, B, H, Tk, Dh, Tq, 1.0f, dprobs, ps, q, heads(Tq, ldq, Dh), 0.0f, dk, heads(Tk, lddk, Dh));
  forget_bf16_operand(dprobs);
  forget_bf16_operand(k);
  forget_bf16_operand(q);
}

void Backend::residual_layer_norm_forward(float* y, float* sum, float* mean, float* rstd, uint8_t* /*mask*/,
                                          const float* x, const float* bias, const float* residual,
                                          const float* gamma, const float* beta, int64_t N, int D, float eps, float p,
                                          DropoutKey key) {
  const float* sub = x;
  if (bias) {
    add_bias(sum, x, bias, N, D);
    sub = sum;
  }
  dropout_add_forward(sum, residual, sub, N * D, p, key);
  layer_norm_forward(y, mean, rstd, sum, gamma, beta, N, D, eps);
}

void Backend::residual_layer_norm_backward(float* dres, float* dx, float* dgamma, float* dbeta, float* dbias,
                                           const float* dy, const float* sum, const float* mean, const float* rstd,
                                           const uint8_t* /*mask*/, const float* gamma, int64_t N, int D, float p,
                                           DropoutKey key) {
  layer_norm_backward(dres, dgamma, dbeta, dy, sum, mean, rstd, gamma, N, D);
  dropout_backward(dx, dres, N * D, p, key);
  if (dbias) bias_backward(dbias, dx, N, D);
}

void Backend::log_softmax_topk(float* values, int32_t* indices, float* shift, float* x, int64_t rows, int V, int k) {
  log_softmax(x, rows, V);
  topk(values, indices, x, rows, V, k);
  fill(shift, 0.0f, rows);
}

// Not a fusion, but the same kind of fallback: a device without the kernel refuses the model by name.
void Backend::bias_activation_forward(float*, const float*, const float*, int64_t, int, Activation a) {
  throw ConfigError(name() + " has no kernel for the " + (a == Activation::gelu ? "gelu" : "swish") +
                        " activation this model uses",
                    "run it on the CPU (--device cpu)");
}

}  // namespace tt::backend
