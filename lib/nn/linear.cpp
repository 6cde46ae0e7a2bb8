#include "nn/linear.h"

#include "ops/matmul.h"
#include "ops/view.h"
#include "util/check.h"

namespace tt::nn {

void Linear::declare_weight(ParameterSet& params, const std::string& prefix, int in, int out) {
  in_ = in;
  out_ = out;
  w_index_ = params.declare(prefix + ".weight", tensor::Shape{out, in}, GradientStart::overwritten);
}

void Linear::declare_bias(ParameterSet& params, const std::string& prefix) {
  b_index_ = params.declare(prefix + ".bias", tensor::Shape{out_});
  has_bias_ = true;
}

void Linear::bind(const ParameterSet& params) {
  w_ = params[w_index_].value;
  dw_ = params[w_index_].grad;
  dw_first_ = params.first_write({w_index_});
  if (has_bias_) {
    b_ = params[b_index_].value;
    db_ = params[b_index_].grad;
  }
}

void Linear::forward(const tensor::Tensor& y, const tensor::Tensor& x) const { ops::linear_forward(y, x, w_, b_); }

void Linear::backward(const tensor::Tensor& dx, const tensor::Tensor& dy, const tensor::Tensor& x,
                      bool accumulate_dx) const {
  ops::linear_backward(dx, dw_, db_, dy, x, w_, accumulate_dx, /*accumulate_dw=*/!dw_first_.take());
}

void Linear::forward_without_bias(const tensor::Tensor& y, const tensor::Tensor& x) const {
  ops::linear_forward(y, x, w_, tensor::Tensor{});
}

void Linear::backward_without_bias(const tensor::Tensor& dx, const tensor::Tensor& dy, const tensor::Tensor& x,
                                   bool accumulate_dx) const {
  ops::linear_backward(dx, dw_, tensor::Tensor{}, dy, x, w_, accumulate_dx, /*accumulate_dw=*/!dw_first_.take());
}

void LinearGroup::bind(const ParameterSet& params, std::vector<const Linear*> members) {
  TT_CHECK(!members.empty());
  members_ = std::move(members);
  offsets_.clear();
  total_out_ = 0;
  const Linear& first = *members_[0];
  bool adjacent = true;
  for (size_t i = 0; i < members_.size(); ++i) {
    const Linear& m = *members_[i];
    TT_CHECK(m.in_ == first.in_ && m.has_bias_ == first.has_bias_);
    offsets_.push_back(total_out_);
    if (i > 0) {
      const Linear& prev = *members_[i - 1];
      adjacent = adjacent && params[m.w_index_].offset == params[prev.w_index_].offset + int64_t{prev.out_} * prev.in_;
      if (m.has_bias_) adjacent = adjacent && params[m.b_index_].offset == params[prev.b_index_].offset + prev.out_;
    }
    total_out_ += m.out_;
  }
  fused_ = adjacent && members_.size() > 1;
  if (fused_) {
    const int64_t w0 = params[first.w_index_].offset;
    merged_.in_ = first.in_;
    merged_.out_ = total_out_;
    tensor::Shape ws{total_out_, first.in_};
    merged_.w_ = ops::view(params.values(), w0, ws);
    if (params.has_gradients()) merged_.dw_ = ops::view(params.grads(), w0, ws);
    std::vector<size_t> weights;
    for (const Linear* m : members_) weights.push_back(m->w_index_);
    merged_.dw_first_ = params.first_write(std::move(weights));
    if (first.has_bias_) {
      const int64_t b0 = params[first.b_index_].offset;
      merged_.b_ = ops::view(params.values(), b0, tensor::Shape{total_out_});
      if (params.has_gradients()) merged_.db_ = ops::view(params.grads(), b0, tensor::Shape{total_out_});
    }
  }
}

int64_t LinearGroup::member_offset(int i, int64_t N) const { return fused_ ? offsets_[i] : N * offsets_[i]; }

int64_t LinearGroup::member_ld(int i) const { return fused_ ? total_out_ : members_[i]->out_; }

void LinearGroup::forward(const tensor::Tensor& y, const tensor::Tensor& x) const { forward(y, x, &Linear::forward); }

void LinearGroup::forward_without_bias(const tensor::Tensor& y, const tensor::Tensor& x) const {
  forward(y, x, &Linear::forward_without_bias);
}

void LinearGroup::forward(const tensor::Tensor& y, const tensor::Tensor& x, LinearForward member_forward) const {
  const int64_t N = x.numel() / members_[0]->in_;
  TT_CHECK(y.numel() == N * total_out_);
  if (fused_) {
    (merged_.*member_forward)(y.reshape(tensor::Shape{N, total_out_}), x);
    return;
  }
  for (size_t i = 0; i < members_.size(); ++i)
    (members_[i]->*member_forward)(ops::view(y, N * offsets_[i], tensor::Shape{N, members_[i]->out_}), x);
}

void LinearGroup::backward(const tensor::Tensor& dx, const tensor::Tensor& dy, const tensor::Tensor& x,
                           bool accumulate_dx) const {
  const int64_t N = x.numel() / members_[0]->in_;
  TT_CHECK(dy.numel() == N * total_out_);
  if (fused_) {
    merged_.backward(dx, dy.reshape(tensor::Shape{N, total_out_}), x, accumulate_dx);
    return;
  }
  for (size_t i = 0; i < members_.size(); ++i)
    members_[i]->backward(dx, ops::view(dy, N * offsets_[i], tensor::Shape{N, members_[i]->out_}), x,
                          accumulate_dx || i > 0);
}

}  // namespace tt::nn
