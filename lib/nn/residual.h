// One sub-layer with its residual connection, dropout and LayerNorm, in either placement:
//   post-LN (the paper, §3.1/§5.4):  y = LayerNorm(x + Dropout(f(x)))
//   pre-LN  (option):                y = x + Dropout(f(LayerNorm(x)))
// f(out, in) computes the sub-layer; fb(din, dout) runs its backward (din assigned). Header-only templates
// so the lambdas inline and nothing is allocated.
// residual_block_forward/backward (training and teacher-forced passes) fuse the post-LN end: the sub-layer's
// last Linear leaves out its bias, and one kernel adds it, drops out, adds the residual and normalises;
// backward, one kernel takes the norm's, the dropout's and that bias's gradients, and the sub-layer adds its
// input gradient onto the residual path's (no separate add).
#pragma once

#include "nn/config.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/step_context.h"
#include "ops/elementwise.h"
#include "ops/kept_bf16.h"
#include "ops/matmul.h"

namespace tt::nn {

struct ResidualSaved {
  LayerNorm::Saved norm;
  // The LayerNorm output the sub-layer (pre-LN) or the next one (post-LN) reads: kept in bf16 training
  // from before the norm's kernel, which writes its copy, until this block's backward.
  tensor::Tensor normed;
  ops::KeptBf16 normed_kept;
  backend::DropoutKey key;
  float p = 0;
};

inline void keep_normed(ResidualSaved& saved, const tensor::Tensor& normed) {
  saved.normed = normed;
  saved.normed_kept = ops::KeptBf16(normed);
}

// y [N, D] must not alias x.
template <class Sublayer>
void residual_forward(const tensor::Tensor& y, const tensor::Tensor& x, const LayerNorm& norm, NormPlacement placement,
                      float p, backend::DropoutKey key, tensor::Arena& arena, ResidualSaved* saved, Sublayer&& f) {
  LayerNorm::Saved* norm_saved = saved ? &saved->norm : nullptr;
  if (saved) {
    saved->key = key;
    saved->p = p;
  }
  if (placement == NormPlacement::post) {
    tensor::Tensor sum = arena.allocate(x.shape());
    f(sum, x);
    ops::dropout_add_forward(sum, x, sum, p, key);  // sum = x + dropout(f(x))
    if (saved) keep_normed(*saved, y);
    norm.forward(y, sum, arena, norm_saved);
  } else {
    tensor::Tensor h = arena.allocate(x.shape());
    if (saved) keep_normed(*saved, h);
    norm.forward(h, x, arena, norm_saved);
    f(y, h);
    ops::dropout_add_forward(y, x, y, p, key);  // y = x + dropout(f(LN(x)))
  }
}

// dx assigned (must not alias dy); dy is clobbered. Temporaries from scratch.
template <class SublayerBackward>
void residual_backward(const tensor::Tensor& dx, const tensor::Tensor& dy, const LayerNorm& norm,
                       NormPlacement placement, const ResidualSaved& saved, tensor::Arena& scratch,
                       SublayerBackward&& fb) {
  // Without dropout the sub-layer's output gradient is dy itself (sub-layer backwards only read it).
  const bool dropout = saved.p > 0;
  tensor::Tensor dsub = dropout ? scratch.allocate(dy.shape()) : dy;
  // dsub's copy (bf16 training) comes from the dropout kernel, for both products of the sub-layer's last Linear.
  const ops::KeptBf16 dsub_kept = dropout ? ops::KeptBf16(dsub) : ops::KeptBf16();
  if (placement == NormPlacement::post) {
    saved.normed_kept.release();  // the next block's backward, its reader, is done
    norm.backward(dy, dy, saved.norm);  // dy now holds d(sum)
    if (dropout) ops::dropout_backward(dsub, dy, saved.p, saved.key);
    fb(dx, dsub);
    ops::add(dx, dx, dy);  // residual path
  } else {
    if (dropout) ops::dropout_backward(dsub, dy, saved.p, saved.key);
    tensor::Tensor dh = scratch.allocate(dy.shape());
    fb(dh, dsub);
    saved.normed_kept.release();
    norm.backward(dh, dh, saved.norm);
    ops::add(dx, dy, dh);
  }
}

// As residual_forward, with f(out, in, fused): fused (post-LN), f leaves out the bias of `last`, its final
// Linear, for the fused kernel; otherwise f adds it itself.
template <class Sublayer>
void residual_block_forward(const tensor::Tensor& y, const tensor::Tensor& x, const LayerNorm& norm,
                            NormPlacement placement, float p, backend::DropoutKey key, tensor::Arena& arena,
                            ResidualSaved* saved, const Linear& last, Sublayer&& f) {
  if (placement == NormPlacement::pre) {
    residual_forward(y, x, norm, placement, p, key, arena, saved,
                     [&](const tensor::Tensor& out, const tensor::Tensor& in) { f(out, in, false); });
    return;
  }
  if (saved) {
    saved->key = key;
    saved->p = p;
  }
  tensor::Tensor sum = arena.allocate(x.shape());
  f(sum, x, true);
  if (saved) keep_normed(*saved, y);
  norm.forward_residual(y, sum, sum, last.bias(), x, p, key, arena, saved ? &saved->norm : nullptr);
}

// As residual_backward, with fb(din, dout, fused): fused (post-LN), din already holds the residual path's
// gradient and fb adds to it, and the bias gradient of `last` is taken here.
template <class SublayerBackward>
void residual_block_backward(const tensor::Tensor& dx, const tensor::Tensor& dy, const LayerNorm& norm,
                             NormPlacement placement, const ResidualSaved& saved, tensor::Arena& scratch,
                             const Linear& last, SublayerBackward&& fb) {
  if (placement == NormPlacement::pre) {
    residual_backward(dx, dy, norm, placement, saved, scratch,
                      [&](const tensor::Tensor& din, const tensor::Tensor& dout) { fb(din, dout, false); });
    return;
  }
  saved.normed_kept.release();  // the next block's backward, its reader, is done
  // The sub-layer output's gradient is read only by the two products of `last`: with bf16 storage on it is
  // stored only in bf16 (never written in fp32), else kept, its copy written by the kernel below.
  const bool stored = dy.backend().bf16_storage() != nullptr;
  tensor::Tensor dsub = scratch.allocate(dy.shape(), stored ? tensor::DType::bf16 : tensor::DType::f32);
  const ops::KeptBf16 dsub_kept(dsub);  // no effect on a bf16 tensor
  norm.backward_residual(dx, dsub, last.bias_grad(), dy, saved.norm, saved.p, saved.key);  // dx = d(sum)
  fb(dx, dsub, true);
}

}  // namespace tt::nn
