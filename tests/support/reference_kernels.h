// Naive double-precision reference of every kernel in backend/backend.h: the oracle the CPU and CUDA
// backends are tested against (llm.c dev/cuda, ggml test-backend-ops). Written for obviousness, not speed:
// plain loops, double accumulation, the formula as stated in backend.h. Host pointers only.
// Inputs are float (what a backend sees); outputs are double so the tests can bound the backend's error.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "backend/backend.h"
#include "util/rng.h"

namespace tt::reference {

using backend::DropoutKey;
using backend::MatrixStrides;

// C[M,N] = alpha * op(A) * op(B) + beta * C (C holds the old values on entry).
inline void gemm(bool trans_a, bool trans_b, int M, int N, int K, double alpha, const float* A, int64_t lda,
                 const float* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double s = 0.0;
      for (int k = 0; k < K; ++k) {
        double a = trans_a ? A[k * lda + i] : A[i * lda + k];
        double b = trans_b ? B[j * ldb + k] : B[k * ldb + j];
        s += a * b;
      }
      C[i * ldc + j] = alpha * s + (beta == 0.0 ? 0.0 : beta * C[i * ldc + j]);
    }
  }
}

inline void gemm_batched(bool trans_a, bool trans_b, int batch1, int batch2, int M, int N, int K, double alpha,
                         const float* A, MatrixStrides a, const float* B, MatrixStrides b, double beta, double* C,
                         MatrixStrides c) {
  for (int i1 = 0; i1 < batch1; ++i1)
    for (int i2 = 0; i2 < batch2; ++i2)
      gemm(trans_a, trans_b, M, N, K, alpha, A + i1 * a.batch1 + i2 * a.batch2, a.ld,
           B + i1 * b.batch1 + i2 * b.batch2, b.ld, beta, C + i1 * c.batch1 + i2 * c.batch2, c.ld);
}

// The dropout mask rule shared by every backend: 0 when dropped, 1/(1-p) when kept.
inline double dropout_factor(DropoutKey key, int64_t i, double p) {
  if (p <= 0.0) return 1.0;
  return util::dropout_keep(key.seed, key.stream, static_cast<uint64_t>(i), static_cast<float>(p)) ? 1.0 / (1.0 - p)
                                                                                                     : 0.0;
}

inline void dropout_forward(double* y, const float* x, int64_t n, double p, DropoutKey key) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * dropout_factor(key, i, p);
}

inline void dropout_add_forward(double* y, const float* residual, const float* x, int64_t n, double p,
                                DropoutKey key) {
  for (int64_t i = 0; i < n; ++i) y[i] = residual[i] + x[i] * dropout_factor(key, i, p);
}

inline void bias_relu_dropout_forward(double* y, const float* x, const float* bias, int64_t N, int F, double p,
                                      DropoutKey key) {
  for (int64_t i = 0; i < N; ++i)
    for (int j = 0; j < F; ++j) {
      double v = static_cast<double>(x[i * F + j]) + bias[j];
      y[i * F + j] = std::max(v, 0.0) * dropout_factor(key, i * F + j, p);
    }
}

inline void relu_dropout_backward(double* dx, const float* dy, const float* y, int64_t n, double p) {
  for (int64_t i = 0; i < n; ++i) dx[i] = y[i] > 0.0f ? dy[i] / (1.0 - p) : 0.0;
}

inline void layer_norm_forward(double* y, double* mean, double* rstd, const float* x, const float* gamma,
                               const float* beta, int64_t N, int D, double eps) {
  for (int64_t i = 0; i < N; ++i) {
    double mu = 0.0, var = 0.0;
    for (int j = 0; j < D; ++j) mu += x[i * D + j];
    mu /= D;
    for (int j = 0; j < D; ++j) var += (x[i * D + j] - mu) * (x[i * D + j] - mu);
    var /= D;
    double rs = 1.0 / std::sqrt(var + eps);
    for (int j = 0; j < D; ++j) y[i * D + j] = (x[i * D + j] - mu) * rs * gamma[j] + beta[j];
    mean[i] = mu;
    rstd[i] = rs;
  }
}

// dx assigned; dgamma and dbeta are the sums over rows (the caller adds them to what it had).
inline void layer_norm_backward(double* dx, double* dgamma, double* dbeta, const float* dy, const float* x,
                                const float* gamma, int64_t N, int D, double eps) {
  std::vector<double> y(static_cast<size_t>(N) * D), mean(N), rstd(N);
  std::vector<float> zero(D, 0.0f);
  layer_norm_forward(y.data(), mean.data(), rstd.data(), x, gamma, zero.data(), N, D, eps);
  std::fill(dgamma, dgamma + D, 0.0);
  std::fill(dbeta, dbeta + D, 0.0);
  for (int64_t i = 0; i < N; ++i) {
    double sg = 0.0, sgx = 0.0;
    for (int j = 0; j < D; ++j) {
      double xhat = (x[i * D + j] - mean[i]) * rstd[i];
      double g = static_cast<double>(dy[i * D + j]) * gamma[j];
      sg += g;
      sgx += g * xhat;
      dgamma[j] += dy[i * D + j] * xhat;
      dbeta[j] += dy[i * D + j];
    }
    for (int j = 0; j < D; ++j) {
      double xhat = (x[i * D + j] - mean[i]) * rstd[i];
      double g = static_cast<double>(dy[i * D + j]) * gamma[j];
      dx[i * D + j] = rstd[i] * (g - sg / D - xhat * sgx / D);
    }
  }
}

// residual_layer_norm_forward: sum = residual + dropout(x + bias) (bias may be null), y = layer norm of sum.
inline void residual_layer_norm_forward(double* y, double* sum, double* mean, double* rstd, const float* x,
                                        const float* bias, const float* residual, const float* gamma,
                                        const float* beta, int64_t N, int D, double eps, double p, DropoutKey key) {
  for (int64_t i = 0; i < N; ++i) {
    double mu = 0.0, var = 0.0;
    for (int j = 0; j < D; ++j) {
      const int64_t e = i * D + j;
      sum[e] = residual[e] + (double(x[e]) + (bias ? bias[j] : 0.0)) * dropout_factor(key, e, p);
      mu += sum[e];
    }
    mu /= D;
    for (int j = 0; j < D; ++j) var += (sum[i * D + j] - mu) * (sum[i * D + j] - mu);
    const double rs = 1.0 / std::sqrt(var / D + eps);
    for (int j = 0; j < D; ++j) y[i * D + j] = (sum[i * D + j] - mu) * rs * gamma[j] + beta[j];
    mean[i] = mu;
    rstd[i] = rs;
  }
}

// Its backward from the forward's sum (as float, what the kernel saved): dres = layer norm backward of dy,
// dx = dropout mask * dres; dgamma, dbeta, dbias are the sums over rows (the caller adds what it had).
inline void residual_layer_norm_backward(double* dres, double* dx, double* dgamma, double* dbeta, double* dbias,
                                         const float* dy, const float* sum, const float* gamma, int64_t N, int D,
                                         double eps, double p, DropoutKey key) {
  layer_norm_backward(dres, dgamma, dbeta, dy, sum, gamma, N, D, eps);
  std::fill(dbias, dbias + D, 0.0);
  for (int64_t e = 0; e < N * D; ++e) {
    dx[e] = dres[e] * dropout_factor(key, e, p);
    dbias[e % D] += dx[e];
  }
}

// Number of unmasked keys of a row, as backend.h defines the masks.
inline int attention_valid_keys(const int32_t* key_lengths, int b, int q, int Tk, bool causal, int query_offset) {
  int len = Tk;
  if (key_lengths) len = std::min(len, key_lengths[b]);
  if (causal) len = std::min(len, q + query_offset + 1);
  return std::max(len, 1);
}

inline void attention_softmax_forward(double* probs, const float* scores, const int32_t* key_lengths, int B, int H,
                                      int Tq, int Tk, double scale, bool causal, int query_offset) {
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int q = 0; q < Tq; ++q) {
        int64_t row = ((static_cast<int64_t>(b) * H + h) * Tq + q) * Tk;
        int len = attention_valid_keys(key_lengths, b, q, Tk, causal, query_offset);
        double mx = -std::numeric_limits<double>::infinity(), sum = 0.0;
        for (int k = 0; k < len; ++k) mx = std::max(mx, scale * scores[row + k]);
        for (int k = 0; k < len; ++k) sum += std::exp(scale * scores[row + k] - mx);
        for (int k = 0; k < Tk; ++k) probs[row + k] = k < len ? std::exp(scale * scores[row + k] - mx) / sum : 0.0;
      }
}

inline void attention_softmax_backward(double* dscores, const float* dprobs, const float* probs, int B, int H, int Tq,
                                       int Tk, double scale) {
  int64_t rows = static_cast<int64_t>(B) * H * Tq;
  for (int64_t r = 0; r < rows; ++r) {
    double dot = 0.0;
    for (int k = 0; k < Tk; ++k) dot += static_cast<double>(dprobs[r * Tk + k]) * probs[r * Tk + k];
    for (int k = 0; k < Tk; ++k) dscores[r * Tk + k] = scale * probs[r * Tk + k] * (dprobs[r * Tk + k] - dot);
  }
}

// attention_forward as backend.h states it, over double intermediates: q/ctx rows (b, t < Tq), k/v rows
// (b, t < Tk), head h at column h * Dh, row strides ld*. probs [B, H, Tq, Tk]; ctx [B * Tq, ldc] (columns
// outside the heads untouched).
inline void attention_forward(double* ctx, int64_t ldc, double* probs, const float* q, int64_t ldq, const float* k,
                              int64_t ldk, const float* v, int64_t ldv, const int32_t* key_lengths, int B, int H, int Tq,
                              int Tk, int Dh, double scale, bool causal, double p, DropoutKey key) {
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      const int64_t base = (static_cast<int64_t>(b) * H + h) * Tq * Tk;
      for (int i = 0; i < Tq; ++i) {
        const int len = attention_valid_keys(key_lengths, b, i, Tk, causal, 0);
        std::vector<double> s(Tk);
        double mx = -std::numeric_limits<double>::infinity(), sum = 0.0;
        for (int j = 0; j < len; ++j) {
          double dot = 0.0;
          for (int d = 0; d < Dh; ++d)
            dot += double(q[(int64_t{b} * Tq + i) * ldq + h * Dh + d]) * k[(int64_t{b} * Tk + j) * ldk + h * Dh + d];
          s[j] = scale * dot;
          mx = std::max(mx, s[j]);
        }
        for (int j = 0; j < len; ++j) sum += std::exp(s[j] - mx);
        for (int j = 0; j < Tk; ++j) probs[base + int64_t{i} * Tk + j] = j < len ? std::exp(s[j] - mx) / sum : 0.0;
        for (int d = 0; d < Dh; ++d) {
          double c = 0.0;
          for (int j = 0; j < Tk; ++j)
            c += probs[base + int64_t{i} * Tk + j] * dropout_factor(key, base + int64_t{i} * Tk + j, p) *
                 v[(int64_t{b} * Tk + j) * ldv + h * Dh + d];
          ctx[(int64_t{b} * Tq + i) * ldc + h * Dh + d] = c;
        }
      }
    }
}

// Its backward from the forward's probs: dq, dk, dv (assigned, the heads' columns) laid out as q, k, v.
inline void attention_backward(double* dq, int64_t lddq, double* dk, int64_t lddk, double* dv, int64_t lddv,
                               const float* dctx, int64_t lddc, const double* probs, const float* q, int64_t ldq,
                               const float* k, int64_t ldk, const float* v, int64_t ldv, int B, int H, int Tq, int Tk,
                               int Dh, double scale, double p, DropoutKey key) {
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      const int64_t base = (static_cast<int64_t>(b) * H + h) * Tq * Tk;
      auto Q = [&](int i, int d) { return double(q[(int64_t{b} * Tq + i) * ldq + h * Dh + d]); };
      auto K = [&](int j, int d) { return double(k[(int64_t{b} * Tk + j) * ldk + h * Dh + d]); };
      auto V = [&](int j, int d) { return double(v[(int64_t{b} * Tk + j) * ldv + h * Dh + d]); };
      auto G = [&](int i, int d) { return double(dctx[(int64_t{b} * Tq + i) * lddc + h * Dh + d]); };
      auto P = [&](int i, int j) { return probs[base + int64_t{i} * Tk + j]; };
      auto F = [&](int i, int j) { return dropout_factor(key, base + int64_t{i} * Tk + j, p); };
      std::vector<double> ds(size_t(Tq) * Tk);
      for (int i = 0; i < Tq; ++i) {
        std::vector<double> dp(Tk);
        double dot = 0.0;
        for (int j = 0; j < Tk; ++j) {
          double g = 0.0;
          for (int d = 0; d < Dh; ++d) g += G(i, d) * V(j, d);
          dp[j] = g * F(i, j);
          dot += dp[j] * P(i, j);
        }
        for (int j = 0; j < Tk; ++j) ds[size_t(i) * Tk + j] = scale * P(i, j) * (dp[j] - dot);
      }
      for (int i = 0; i < Tq; ++i)
        for (int d = 0; d < Dh; ++d) {
          double a = 0.0;
          for (int j = 0; j < Tk; ++j) a += ds[size_t(i) * Tk + j] * K(j, d);
          dq[(int64_t{b} * Tq + i) * lddq + h * Dh + d] = a;
        }
      for (int j = 0; j < Tk; ++j)
        for (int d = 0; d < Dh; ++d) {
          double a = 0.0, c = 0.0;
          for (int i = 0; i < Tq; ++i) {
            a += ds[size_t(i) * Tk + j] * Q(i, d);
            c += P(i, j) * F(i, j) * G(i, d);
          }
          dk[(int64_t{b} * Tk + j) * lddk + h * Dh + d] = a;
          dv[(int64_t{b} * Tk + j) * lddv + h * Dh + d] = c;
        }
    }
}

inline void log_softmax(double* y, const float* x, int64_t N, int V) {
  for (int64_t i = 0; i < N; ++i) {
    double mx = -std::numeric_limits<double>::infinity(), sum = 0.0;
    for (int k = 0; k < V; ++k) mx = std::max(mx, static_cast<double>(x[i * V + k]));
    for (int k = 0; k < V; ++k) sum += std::exp(x[i * V + k] - mx);
    for (int k = 0; k < V; ++k) y[i * V + k] = x[i * V + k] - mx - std::log(sum);
  }
}

// loss[N], nll[N], grad[N, V] as backend.h specifies cross_entropy_forward_backward.
inline void cross_entropy_forward_backward(double* loss, double* nll, double* grad, const float* logits,
                                           const int32_t* targets, int64_t N, int V, double eps, int32_t ignore_id,
                                           double grad_scale) {
  std::vector<double> logp(V);
  for (int64_t i = 0; i < N; ++i) {
    if (targets[i] == ignore_id) {
      loss[i] = nll[i] = 0.0;
      for (int k = 0; k < V; ++k) grad[i * V + k] = 0.0;
      continue;
    }
    log_softmax(logp.data(), logits + i * V, 1, V);
    double l = 0.0;
    for (int k = 0; k < V; ++k) {
      double q = (k == targets[i] ? 1.0 - eps : 0.0) + eps / V;
      l -= q * logp[k];
      grad[i * V + k] = (std::exp(logp[k]) - q) * grad_scale;
    }
    loss[i] = l;
    nll[i] = -logp[targets[i]];
  }
}

inline void embedding_forward(double* y, const int32_t* ids, const float* table, const float* positions,
                              double scale, int B, int T, int D, int position_offset) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int j = 0; j < D; ++j) {
        int64_t i = static_cast<int64_t>(b) * T + t;
        double v = scale * table[static_cast<int64_t>(ids[i]) * D + j];
        if (positions) v += positions[static_cast<int64_t>(position_offset + t) * D + j];
        y[i * D + j] = v;
      }
}

// dtable accumulated (+=) like the kernel.
inline void embedding_backward(double* dtable, const float* dy, const int32_t* ids, double scale, int64_t N, int D) {
  for (int64_t i = 0; i < N; ++i)
    for (int j = 0; j < D; ++j) dtable[static_cast<int64_t>(ids[i]) * D + j] += scale * dy[i * D + j];
}

inline void positions_backward(double* dpositions, const float* dy, int B, int T, int D) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int j = 0; j < D; ++j) dpositions[static_cast<int64_t>(t) * D + j] += dy[(static_cast<int64_t>(b) * T + t) * D + j];
}

inline void bias_backward(double* dbias, const float* dy, int64_t N, int D) {
  for (int64_t i = 0; i < N; ++i)
    for (int j = 0; j < D; ++j) dbias[j] += dy[i * D + j];
}

// Adam with bias correction and decoupled weight decay, as backend.h and cpu/adam.cpp define it.
inline void adam_step(double* param, double* m, double* v, const float* grad, int64_t n, double lr, double beta1,
                      double beta2, double eps, double weight_decay, int64_t step) {
  double bc1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  double bc2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  for (int64_t i = 0; i < n; ++i) {
    m[i] = beta1 * m[i] + (1.0 - beta1) * grad[i];
    v[i] = beta2 * v[i] + (1.0 - beta2) * grad[i] * grad[i];
    double update = (m[i] / bc1) / (std::sqrt(v[i] / bc2) + eps);
    param[i] = param[i] - lr * weight_decay * param[i] - lr * update;
  }
}

inline void gather_rows(double* dst, const float* src, const int32_t* index, int64_t N, int64_t D) {
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < D; ++j) dst[i * D + j] = src[static_cast<int64_t>(index[i]) * D + j];
}

}  // namespace tt::reference
