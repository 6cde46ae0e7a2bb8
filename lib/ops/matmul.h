// Matrix products on tensors: the Linear layer's forward/backward and strided batched products for
// attention. Shapes are checked here once; the backend does the arithmetic (oneDNN / cuBLAS).
#pragma once

#include "backend/backend.h"
#include "tensor/tensor.h"

namespace tt::ops {

// y[N, O] = x[N, I] · W^T + b, with W [O, I] (PyTorch layout) and b [O] (may be undefined: no bias).
// x and y may have any rank; their last dims are I and O. x may be bf16 (in forward and backward) where
// the backend stores bf16 activations (Backend::bf16_storage). A caller whose backward reads x again keeps
// it (ops::KeptBf16) until then.
void linear_forward(const tensor::Tensor& y, const tensor::Tensor& x, const tensor::Tensor& w,
                    const tensor::Tensor& b);
// dW[O, I] += dy^T · x (assigned when !accumulate_dw), db[O] += column sums of dy (if db defined), and
// dx = dy · W (assigned, or added when accumulate_dx; skipped when dx is undefined). dy may be bf16 as x may
// (then without db).
void linear_backward(const tensor::Tensor& dx, const tensor::Tensor& dw, const tensor::Tensor& db,
                     const tensor::Tensor& dy, const tensor::Tensor& x, const tensor::Tensor& w,
                     bool accumulate_dx = false, bool accumulate_dw = true);

// c[M, N] = alpha · op(a) · op(b) + beta · c for 2-D tensors (op = transpose when the flag is set).
void matmul(const tensor::Tensor& c, const tensor::Tensor& a, bool trans_a, const tensor::Tensor& b, bool trans_b,
            float alpha = 1.0f, float beta = 0.0f);

// A [batch1, batch2] grid of products on strided operands that start at the first element of each tensor
// (use ops::tail for operands at an offset). The sizes are not derivable from the views, so the caller
// states them; the tensors are checked to hold the last element addressed.
struct BatchedShape {
  int batch1 = 1, batch2 = 1, M = 0, N = 0, K = 0;
};
void batched_matmul(const tensor::Tensor& c, backend::MatrixStrides cs, const tensor::Tensor& a,
                    backend::MatrixStrides as, bool trans_a, const tensor::Tensor& b, backend::MatrixStrides bs,
                    bool trans_b, BatchedShape shape, float alpha = 1.0f, float beta = 0.0f);

}  // namespace tt::ops
