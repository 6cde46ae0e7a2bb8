#include "ops/softmax.h"

#include "util/check.h"

namespace tt::ops {

void attention_softmax_forward(const tensor::Tensor& scores, const tensor::Tensor& key_lengths, float scale,
                               bool causal, int query_offset) {
  const auto& s = scores.shape();
  TT_CHECK_MSG(s.rank() == 4, "attention scores must be [B, H, Tq, Tk], got " + s.str());
  if (key_lengths.defined()) TT_CHECK(key_lengths.numel() >= s[0]);
  scores.backend().attention_softmax_forward(scores.f32(), key_lengths.defined() ? key_lengths.i32() : nullptr,
                                             static_cast<int>(s[0]), static_cast<int>(s[1]), static_cast<int>(s[2]),
                                             static_cast<int>(s[3]), scale, causal, query_offset);
}

void attention_softmax_backward(const tensor::Tensor& grad, const tensor::Tensor& probs, float scale) {
  const auto& s = probs.shape();
  TT_CHECK(s.rank() == 4 && grad.numel() == probs.numel());
  grad.backend().attention_softmax_backward(grad.f32(), probs.f32(), static_cast<int>(s[0]), static_cast<int>(s[1]),
                                            static_cast<int>(s[2]), static_cast<int>(s[3]), scale);
}

void log_softmax(const tensor::Tensor& x) {
  const int V = static_cast<int>(x.dim(x.shape().rank() - 1));
  x.backend().log_softmax(x.f32(), x.numel() / V, V);
}

}  // namespace tt::ops
