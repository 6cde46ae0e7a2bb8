#include "ops/decoding.h"

#include <cmath>

#include "util/check.h"

namespace tt::ops {

void attention_decode(const tensor::Tensor& ctx, const tensor::Tensor& probs, const tensor::Tensor& q,
                      const tensor::Tensor& k, const tensor::Tensor& v, const tensor::Tensor& key_rows,
                      const tensor::Tensor& key_counts, int H) {
  const int64_t D = q.dim(q.shape().rank() - 1);
  const int64_t rows = q.numel() / D;
  TT_CHECK_MSG(H > 0 && D % H == 0, "attention_decode: " + std::to_string(H) + " heads for width " + std::to_string(D));
  TT_CHECK(ctx.numel() == rows * D && k.numel() % D == 0 && v.numel() == k.numel());
  TT_CHECK(key_rows.dtype() == tensor::DType::i32 && key_counts.dtype() == tensor::DType::i32);
  TT_CHECK(key_counts.numel() == rows && rows > 0 && key_rows.numel() % rows == 0);
  const int64_t max_keys = key_rows.numel() / rows;
  if (probs.defined())
    TT_CHECK_MSG(probs.numel() == rows * H * max_keys,
                 "attention capture " + probs.shape().str() + " for " + std::to_string(rows) + " rows, " +
                     std::to_string(H) + " heads, " + std::to_string(max_keys) + " keys");
  const int Dh = static_cast<int>(D / H);
  q.backend().attention_decode(ctx.f32(), D, probs.defined() ? probs.f32() : nullptr, q.f32(), D, k.f32(), v.f32(), D,
                               key_rows.i32(), key_counts.i32(), static_cast<int>(rows), static_cast<int>(max_keys),
                               H, Dh, 1.0f / std::sqrt(static_cast<float>(Dh)));
}

namespace {

// k per row of x, checked against values and indices.
int64_t topk_width(const tensor::Tensor& values, const tensor::Tensor& indices, const tensor::Tensor& x) {
  const int64_t V = x.dim(x.shape().rank() - 1), rows = x.numel() / V;
  TT_CHECK(values.numel() % rows == 0 && values.numel() == indices.numel());
  TT_CHECK(indices.dtype() == tensor::DType::i32);
  const int64_t k = values.numel() / rows;
  TT_CHECK_MSG(k >= 1 && k <= V, "topk: k = " + std::to_string(k) + " of " + std::to_string(V) + " columns");
  return k;
}

}  // namespace

void topk(const tensor::Tensor& values, const tensor::Tensor& indices, const tensor::Tensor& x) {
  const int64_t k = topk_width(values, indices, x), V = x.dim(x.shape().rank() - 1);
  x.backend().topk(values.f32(), indices.i32(), x.f32(), x.numel() / V, static_cast<int>(V), static_cast<int>(k));
}

void log_softmax_topk(const tensor::Tensor& values, const tensor::Tensor& indices, const tensor::Tensor& shift,
                      const tensor::Tensor& x) {
  const int64_t k = topk_width(values, indices, x), V = x.dim(x.shape().rank() - 1), rows = x.numel() / V;
  TT_CHECK(shift.numel() == rows && shift.dtype() == tensor::DType::f32);
  backend::Backend& be = x.backend();
  if (be.fuses(backend::Backend::Fused::log_softmax_topk))
    be.log_softmax_topk(values.f32(), indices.i32(), shift.f32(), x.f32(), rows, static_cast<int>(V),
                        static_cast<int>(k));
  else
    composed_log_softmax_topk(be, values.f32(), indices.i32(), shift.f32(), x.f32(), rows, static_cast<int>(V),
                              static_cast<int>(k));
}

void composed_log_softmax_topk(backend::Backend& be, float* values, int32_t* indices, float* shift, float* x,
                               int64_t rows, int V, int k) {
  be.log_softmax(x, rows, V);
  be.topk(values, indices, x, rows, V, k);
  be.fill(shift, 0.0f, rows);
}

}  // namespace tt::ops
