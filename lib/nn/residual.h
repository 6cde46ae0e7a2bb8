// One sub-layer with its residual connection, dropout and LayerNorm, in either placement:
//   post-LN (the paper, §3.1/§5.4):  y = LayerNorm(x + Dropout(f(x)))
//   pre-LN  (option):                y = x + Dropout(f(LayerNorm(x)))
// f(out, in) computes the sub-layer; fb(din, dout) runs its backward (din assigned). Header-only templates
// so the lambdas inline and nothing is allocated.
#pragma once

#include "nn/config.h"
#include "nn/layer_norm.h"
#include "nn/step_context.h"
#include "ops/elementwise.h"

namespace tt::nn {

struct ResidualSaved {
  LayerNorm::Saved norm;
  backend::DropoutKey key;
  float p = 0;
};

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
    norm.forward(y, sum, arena, norm_saved);
  } else {
    tensor::Tensor h = arena.allocate(x.shape());
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
  if (placement == NormPlacement::post) {
    norm.backward(dy, dy, saved.norm);  // dy now holds d(sum)
    if (dropout) ops::dropout_backward(dsub, dy, saved.p, saved.key);
    fb(dx, dsub);
    ops::add(dx, dx, dy);  // residual path
  } else {
    if (dropout) ops::dropout_backward(dsub, dy, saved.p, saved.key);
    tensor::Tensor dh = scratch.allocate(dy.shape());
    fb(dh, dsub);
    norm.backward(dh, dh, saved.norm);
    ops::add(dx, dy, dh);
  }
}

}  // namespace tt::nn
