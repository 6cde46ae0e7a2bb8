// The default implementations of the fused kernels (backend.h): the kernels they fuse, one after another.
// A backend with fused versions overrides them (the CPU backend does); any other gets them from its
// primitives, with the same results up to rounding. Attention composes in ops/attention.cpp instead.
//   residual layer norm: x, residual, sum, y [N, D]
//   log_softmax_topk: x [rows, V] (overwritten), values, indices [rows, k], shift [rows]
#include "backend/backend.h"

#include "util/error.h"

namespace tt::backend {

// Reached only by a caller that did not ask has_fused_attention() (ops/attention.cpp does).
void Backend::attention_forward(const AttentionForwardArgs&) {
  throw InternalError("attention_forward: backend " + name() + " has no fused attention in this mode");
}

void Backend::attention_backward(const AttentionBackwardArgs&) {
  throw InternalError("attention_backward: backend " + name() + " has no fused attention in this mode");
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
