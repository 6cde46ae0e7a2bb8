#include "nn/params.h"

#include <algorithm>

#include "util/check.h"
#include "util/error.h"

namespace tt::nn {

size_t ParameterSet::declare(const std::string& name, tensor::Shape shape, GradientStart start) {
  TT_CHECK_MSG(!allocated(), "declare after allocate: " + name);
  TT_CHECK_MSG(find(name) == nullptr, "duplicate parameter " + name);
  // Keep each tensor 64-byte aligned inside the flat buffer (16 floats) for vector loads.
  int64_t offset = (total_ + 15) / 16 * 16;
  params_.push_back(Parameter{name, shape, offset, {}, {}, start});
  total_ = offset + shape.numel();
  count_ += shape.numel();
  return params_.size() - 1;
}

void ParameterSet::allocate(backend::Backend& backend, bool with_gradients) {
  values_ = tensor::Tensor::zeros(backend, tensor::Shape{total_});
  if (with_gradients) grads_ = tensor::Tensor::zeros(backend, tensor::Shape{total_});
  zeroed_runs_.clear();
  int64_t zeroed_from = 0;
  for (auto& p : params_) {
    p.value = values_.slice_rows(p.offset, p.shape.numel()).reshape(p.shape);
    if (with_gradients) p.grad = grads_.slice_rows(p.offset, p.shape.numel()).reshape(p.shape);
    if (p.start == GradientStart::overwritten && p.shape.numel() > 0) {
      if (p.offset > zeroed_from) zeroed_runs_.emplace_back(zeroed_from, p.offset);
      zeroed_from = p.offset + p.shape.numel();
    }
  }
  if (total_ > zeroed_from) zeroed_runs_.emplace_back(zeroed_from, total_);
  pending_->assign(params_.size(), 0);
}

void ParameterSet::zero_grad() const {
  if (!grads_.defined()) return;
  grads_.zero();
  std::fill(pending_->begin(), pending_->end(), uint8_t{0});
}

void ParameterSet::zero_grad_lazily() const {
  if (!grads_.defined()) return;
  for (const auto& [begin, end] : zeroed_runs_) grads_.slice_rows(begin, end - begin).zero();
  for (size_t i = 0; i < params_.size(); ++i) (*pending_)[i] = params_[i].start == GradientStart::overwritten;
}

void ParameterSet::finish_gradients() const {
  for (size_t i = 0; i < params_.size(); ++i)
    if ((*pending_)[i]) {
      params_[i].grad.zero();
      (*pending_)[i] = 0;
    }
}

bool FirstWrite::take() const {
  if (!pending_ || pending_->empty() || indices_.empty()) return false;  // no gradients (inference)
  const bool first = (*pending_)[indices_[0]] != 0;
  for (size_t i : indices_) {
    // Written together, so never some pending and some not; a mix would leave stale values in a gradient.
    TT_CHECK_MSG(((*pending_)[i] != 0) == first, "gradients written together were written apart");
    (*pending_)[i] = 0;
  }
  return first;
}

void ParameterSet::share_values(const ParameterSet& other) {
  if (!other.allocated() || other.total_ != total_ || other.params_.size() != params_.size())
    throw Error("share_values: the parameter sets differ");
  values_ = other.values_;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].name != other.params_[i].name) throw Error("share_values: the parameter sets differ");
    params_[i].value = other.params_[i].value;
  }
}

const Parameter* ParameterSet::find(const std::string& name) const {
  for (auto& p : params_)
    if (p.name == name) return &p;
  return nullptr;
}

const Parameter& ParameterSet::get(const std::string& name) const {
  const Parameter* p = find(name);
  if (!p) throw Error("model has no parameter named '" + name + "'");
  return *p;
}

}  // namespace tt::nn
