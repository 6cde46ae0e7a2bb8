#include "nn/params.h"

#include "util/check.h"
#include "util/error.h"

namespace tt::nn {

size_t ParameterSet::declare(const std::string& name, tensor::Shape shape) {
  TT_CHECK_MSG(!allocated(), "declare after allocate: " + name);
  TT_CHECK_MSG(find(name) == nullptr, "duplicate parameter " + name);
  // Keep each tensor 64-byte aligned inside the flat buffer (16 floats) for vector loads.
  int64_t offset = (total_ + 15) / 16 * 16;
  params_.push_back(Parameter{name, shape, offset, {}, {}});
  total_ = offset + shape.numel();
  count_ += shape.numel();
  return params_.size() - 1;
}

void ParameterSet::allocate(backend::Backend& backend, bool with_gradients) {
  values_ = tensor::Tensor::zeros(backend, tensor::Shape{total_});
  if (with_gradients) grads_ = tensor::Tensor::zeros(backend, tensor::Shape{total_});
  for (auto& p : params_) {
    p.value = values_.slice_rows(p.offset, p.shape.numel()).reshape(p.shape);
    if (with_gradients) p.grad = grads_.slice_rows(p.offset, p.shape.numel()).reshape(p.shape);
  }
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
