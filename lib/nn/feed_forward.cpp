#include "nn/feed_forward.h"

#include <optional>

#include "ops/elementwise.h"
#include "ops/kept_bf16.h"
#include "ops/matmul.h"
#include "util/check.h"

namespace tt::nn {

void FeedForward::declare(ParameterSet& params, const std::string& prefix, int D, int F, float relu_dropout,
                          backend::Activation activation, uint32_t site) {
  D_ = D;
  F_ = F;
  relu_dropout_ = relu_dropout;
  activation_ = activation;
  site_ = site;
  fc1_.declare(params, prefix + ".fc1", D, F);
  fc2_.declare(params, prefix + ".fc2", F, D);
}

void FeedForward::bind(const ParameterSet& params) {
  fc1_.bind(params);
  fc2_.bind(params);
}

void FeedForward::forward(const tensor::Tensor& y, const tensor::Tensor& x, const StepContext& ctx, Saved* saved,
                          bool fused) const {
  const int64_t N = x.numel() / D_;
  if (activation_ != backend::Activation::relu) {
    TT_CHECK_MSG(!saved, "training runs ReLU models only (Transformer refuses the others)");
    tensor::Tensor hidden = ctx.arena.allocate(tensor::Shape{N, F_});
    ops::linear_forward(hidden, x, fc1_.weight(), tensor::Tensor{});
    ops::bias_activation_forward(hidden, hidden, fc1_.bias(), activation_);
    if (fused) fc2_.forward_without_bias(y, hidden);
    else fc2_.forward(y, hidden);
    return;
  }
  const float p = ctx.rate(relu_dropout_);
  // bf16 training: the fp32 pre-activation lives only until the fused kernel has written the bf16 hidden
  // layer, which is all that is saved (half the memory of an fp32 hidden layer, no bf16 copy beside it).
  tensor::Arena* temporaries = saved ? ctx.bf16_temporaries(x.backend()) : nullptr;
  std::optional<tensor::ArenaScope> scope;
  if (temporaries) scope.emplace(*temporaries);
  tensor::Tensor pre = (temporaries ? *temporaries : ctx.arena).allocate(tensor::Shape{N, F_});
  tensor::Tensor hidden = temporaries ? ctx.arena.allocate(tensor::Shape{N, F_}, tensor::DType::bf16) : pre;
  // fc1's backward reads x again (bf16 training: from its copy).
  ops::KeptBf16 x_kept = saved ? ops::KeptBf16(x) : ops::KeptBf16();
  // The bias is added by the fused kernel together with ReLU and dropout: one pass over [N, F].
  ops::linear_forward(pre, x, fc1_.weight(), tensor::Tensor{});
  // bf16 training on an fp32 hidden layer: the fused kernel writes its copy, which fc2 reads here and in
  // backward.
  ops::KeptBf16 hidden_kept = saved ? ops::KeptBf16(hidden) : ops::KeptBf16();
  ops::bias_relu_dropout_forward(hidden, pre, fc1_.bias(), p, ctx.key(site_));
  if (fused) fc2_.forward_without_bias(y, hidden);
  else fc2_.forward(y, hidden);
  if (saved) *saved = Saved{x, hidden, p, std::move(x_kept), std::move(hidden_kept)};
}

void FeedForward::backward(const tensor::Tensor& dx, const tensor::Tensor& dy, const Saved& saved,
                           tensor::Arena& scratch, bool fused) const {
  const int64_t N = saved.x.numel() / D_;
  tensor::Tensor dhidden = scratch.allocate(tensor::Shape{N, F_});
  if (fused) fc2_.backward_without_bias(dhidden, dy, saved.hidden);
  else fc2_.backward(dhidden, dy, saved.hidden);
  const ops::KeptBf16 dhidden_kept(dhidden);  // its copy from the kernel below, for both of fc1's products
  // fc1's bias gradient is taken by the same kernel, while each row of the gradient is at hand.
  ops::relu_dropout_backward(dhidden, dhidden, saved.hidden, saved.p, fc1_.bias_grad());
  saved.hidden_kept.release();
  fc1_.backward_without_bias(dx, dhidden, saved.x, /*accumulate_dx=*/fused);
  saved.x_kept.release();
}

}  // namespace tt::nn
