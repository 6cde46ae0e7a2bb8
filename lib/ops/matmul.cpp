#include "ops/matmul.h"

#include <string>

#include "backend/bf16_storage.h"
#include "ops/kept_bf16.h"
#include "util/check.h"

namespace tt::ops {

namespace {

int64_t last_dim(const tensor::Tensor& t) { return t.dim(t.shape().rank() - 1); }

// Rows of a tensor viewed as [rows, last dim].
int64_t rows(const tensor::Tensor& t) {
  int64_t d = last_dim(t);
  return d ? t.numel() / d : 0;
}

// Highest element index addressed by a strided matrix grid, plus one.
int64_t extent(backend::MatrixStrides s, int batch1, int batch2, int rows, int cols) {
  if (batch1 == 0 || batch2 == 0 || rows == 0 || cols == 0) return 0;
  return (batch1 - 1) * s.batch1 + (batch2 - 1) * s.batch2 + (rows - 1) * s.ld + cols;
}

// linear_backward's products when dy is stored in bf16 (bf16 storage on; dy has no fp32 values to read).
void linear_backward_stored_dy(const tensor::Tensor& dx, const tensor::Tensor& dw, const tensor::Tensor& dy,
                               const tensor::Tensor& x, const tensor::Tensor& w, bool accumulate_dx,
                               bool accumulate_dw) {
  const int64_t O = w.dim(0), I = w.dim(1), N = rows(x);
  backend::Bf16Storage& st = backend::bf16_storage_of(x.backend(), "linear_backward");
  const bool x16 = x.dtype() == tensor::DType::bf16;
  const void* xs = x16 ? static_cast<const void*>(x.bf16()) : x.f32();
  // dW[O, I] (+)= dy^T[O, N] · x[N, I]
  st.gemm_bf16_operand(true, false, static_cast<int>(O), static_cast<int>(I), static_cast<int>(N), 1.0f, dy.bf16(), O,
                       true, xs, I, x16, accumulate_dw ? 1.0f : 0.0f, dw.f32(), I);
  if (dx.defined()) {  // dx[N, I] (+)= dy[N, O] · W[O, I]
    TT_CHECK(dx.numel() == N * I);
    st.gemm_bf16_operand(false, false, static_cast<int>(N), static_cast<int>(I), static_cast<int>(O), 1.0f, dy.bf16(),
                         O, true, w.f32(), I, false, accumulate_dx ? 1.0f : 0.0f, dx.f32(), I);
  }
}

}  // namespace

void linear_forward(const tensor::Tensor& y, const tensor::Tensor& x, const tensor::Tensor& w,
                    const tensor::Tensor& b) {
  const int64_t O = w.dim(0), I = w.dim(1), N = rows(x);
  TT_CHECK_MSG(last_dim(x) == I && last_dim(y) == O && rows(y) == N,
               "linear: x " + x.shape().str() + ", W " + w.shape().str() + ", y " + y.shape().str());
  if (N == 0) return;
  auto& be = x.backend();
  if (x.dtype() == tensor::DType::bf16)
    backend::bf16_storage_of(be, "linear_forward")
        .gemm_bf16_operand(false, true, static_cast<int>(N), static_cast<int>(O), static_cast<int>(I), 1.0f, x.bf16(), I,
                           true, w.f32(), I, false, 0.0f, y.f32(), O);
  else
    be.gemm(false, true, static_cast<int>(N), static_cast<int>(O), static_cast<int>(I), 1.0f, x.f32(), I, w.f32(),
            I, 0.0f, y.f32(), O);
  if (b.defined()) {
    TT_CHECK(b.numel() == O);
    be.add_bias(y.f32(), y.f32(), b.f32(), N, static_cast<int>(O));
  }
}

void linear_backward(const tensor::Tensor& dx, const tensor::Tensor& dw, const tensor::Tensor& db,
                     const tensor::Tensor& dy, const tensor::Tensor& x, const tensor::Tensor& w,
                     bool accumulate_dx, bool accumulate_dw) {
  const int64_t O = w.dim(0), I = w.dim(1), N = rows(x);
  TT_CHECK_MSG(last_dim(dy) == O && rows(dy) == N && dw.shape() == w.shape(),
               "linear backward: dy " + dy.shape().str() + ", x " + x.shape().str() + ", W " + w.shape().str());
  if (N == 0) {
    if (!accumulate_dw) dw.zero();  // the empty sum, assigned
    return;
  }
  auto& be = x.backend();
  if (dy.dtype() == tensor::DType::bf16) {
    TT_CHECK_MSG(!db.defined(), "linear backward: a bias gradient from a bf16-stored dy");
    linear_backward_stored_dy(dx, dw, dy, x, w, accumulate_dx, accumulate_dw);
    return;
  }
  const KeptBf16 dy_kept(dy);  // both products read dy
  const float dw_beta = accumulate_dw ? 1.0f : 0.0f;
  // dW[O, I] (+)= dy^T[O, N] · x[N, I]
  if (x.dtype() == tensor::DType::bf16)
    backend::bf16_storage_of(be, "linear_backward")
        .gemm_bf16_operand(true, false, static_cast<int>(O), static_cast<int>(I), static_cast<int>(N), 1.0f, dy.f32(), O,
                           false, x.bf16(), I, true, dw_beta, dw.f32(), I);
  else
    be.gemm(true, false, static_cast<int>(O), static_cast<int>(I), static_cast<int>(N), 1.0f, dy.f32(), O,
            x.f32(), I, dw_beta, dw.f32(), I);
  if (db.defined()) be.bias_backward(db.f32(), dy.f32(), N, static_cast<int>(O));
  if (dx.defined()) {
    TT_CHECK(dx.numel() == N * I);
    be.gemm(false, false, static_cast<int>(N), static_cast<int>(I), static_cast<int>(O), 1.0f, dy.f32(), O,
            w.f32(), I, accumulate_dx ? 1.0f : 0.0f, dx.f32(), I);
  }
}

void matmul(const tensor::Tensor& c, const tensor::Tensor& a, bool trans_a, const tensor::Tensor& b, bool trans_b,
            float alpha, float beta) {
  TT_CHECK(a.shape().rank() == 2 && b.shape().rank() == 2 && c.shape().rank() == 2);
  const int64_t M = trans_a ? a.dim(1) : a.dim(0), K = trans_a ? a.dim(0) : a.dim(1);
  const int64_t Kb = trans_b ? b.dim(1) : b.dim(0), N = trans_b ? b.dim(0) : b.dim(1);
  TT_CHECK_MSG(K == Kb && c.dim(0) == M && c.dim(1) == N,
               "matmul: a " + a.shape().str() + ", b " + b.shape().str() + ", c " + c.shape().str());
  if (M == 0 || N == 0) return;
  c.backend().gemm(trans_a, trans_b, static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), alpha,
                   a.f32(), a.dim(1), b.f32(), b.dim(1), beta, c.f32(), N);
}

void batched_matmul(const tensor::Tensor& c, backend::MatrixStrides cs, const tensor::Tensor& a,
                    backend::MatrixStrides as, bool trans_a, const tensor::Tensor& b, backend::MatrixStrides bs,
                    bool trans_b, BatchedShape s, float alpha, float beta) {
  TT_CHECK(extent(cs, s.batch1, s.batch2, s.M, s.N) <= c.numel());
  TT_CHECK(extent(as, s.batch1, s.batch2, trans_a ? s.K : s.M, trans_a ? s.M : s.K) <= a.numel());
  TT_CHECK(extent(bs, s.batch1, s.batch2, trans_b ? s.N : s.K, trans_b ? s.K : s.N) <= b.numel());
  if (s.batch1 == 0 || s.batch2 == 0 || s.M == 0 || s.N == 0) return;
  c.backend().gemm_batched(trans_a, trans_b, s.batch1, s.batch2, s.M, s.N, s.K, alpha, a.f32(), as, b.f32(), bs,
                           beta, c.f32(), cs);
}

}  // namespace tt::ops
