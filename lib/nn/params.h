// The named parameter registry. Every trainable tensor of the model is declared here by name
// ("encoder.layers.0.self_attn.q_proj.weight"), then all values live in ONE flat buffer and all gradients
// in another: the optimizer, gradient clipping, checkpoint averaging and zeroing each run as one kernel
// over the whole model, and safetensors I/O walks the list in order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace tt::nn {

struct Parameter {
  std::string name;
  tensor::Shape shape;
  int64_t offset = 0;    // elements into the flat buffers
  tensor::Tensor value;  // view into values()
  tensor::Tensor grad;   // view into grads()
};

class ParameterSet {
 public:
  // Phase 1: declare. Returns the index; names must be unique.
  size_t declare(const std::string& name, tensor::Shape shape);
  // Phase 2: allocate the flat buffers (values zero; with gradients, grads zero too) and make the views.
  // Inference allocates no gradient buffer: Parameter::grad and grads() stay undefined.
  void allocate(backend::Backend& backend, bool with_gradients = true);
  // Phase 2, instead: the values are `other`'s (the same declarations; no copy, no gradients), for a
  // second backend on the same device reading one model's weights in place.
  void share_values(const ParameterSet& other);

  bool allocated() const { return values_.defined(); }
  bool has_gradients() const { return grads_.defined(); }
  const std::vector<Parameter>& all() const { return params_; }
  const Parameter& operator[](size_t i) const { return params_[i]; }
  const Parameter* find(const std::string& name) const;  // nullptr if absent
  const Parameter& get(const std::string& name) const;   // throws tt::Error naming it if absent
  int64_t count() const { return count_; }  // trainable values (without alignment padding)
  int64_t flat_size() const { return total_; }
  const tensor::Tensor& values() const { return values_; }
  const tensor::Tensor& grads() const { return grads_; }
  void zero_grad() const {
    if (grads_.defined()) grads_.zero();
  }

 private:
  std::vector<Parameter> params_;
  int64_t total_ = 0;
  int64_t count_ = 0;
  tensor::Tensor values_;
  tensor::Tensor grads_;
};

}  // namespace tt::nn
