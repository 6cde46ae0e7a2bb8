// The named parameter registry. Every trainable tensor of the model is declared here by name
// ("encoder.layers.0.self_attn.q_proj.weight"), then all values live in ONE flat buffer and all gradients
// in another: the optimizer, gradient clipping and checkpoint averaging each run as one kernel over the
// whole model, and safetensors I/O walks the list in order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace tt::nn {

// How a training step's first write reaches a parameter's gradient. A weight whose gradient one product
// makes per batch (a Linear's) is `overwritten`: ParameterSet::zero_grad_lazily() leaves it, and that
// product's first call of the step writes it with beta 0 instead of adding to zeros stored by a pass of
// their own (at `base`, 42 M of 48 M gradients: one write of them and one read fewer per step).
enum class GradientStart { zeroed, overwritten };

struct Parameter {
  std::string name;
  tensor::Shape shape;
  int64_t offset = 0;    // elements into the flat buffers
  tensor::Tensor value;  // view into values()
  tensor::Tensor grad;   // view into grads()
  GradientStart start = GradientStart::zeroed;
};

// Whether some `overwritten` gradients are still unwritten in this step (see GradientStart). One object
// names the parameters one product writes together (a merged q/k/v weight is three); copies share state.
class FirstWrite {
 public:
  FirstWrite() = default;
  FirstWrite(std::shared_ptr<std::vector<uint8_t>> pending, std::vector<size_t> indices)
      : pending_(std::move(pending)), indices_(std::move(indices)) {}
  // True when the caller's product must overwrite the gradients (the step's first write); they count as
  // written from now on. Without zero_grad_lazily() (inference, tests, zero_grad()) always false: add.
  bool take() const;

 private:
  std::shared_ptr<std::vector<uint8_t>> pending_;
  std::vector<size_t> indices_;
};

class ParameterSet {
 public:
  // Phase 1: declare. Returns the index; names must be unique.
  size_t declare(const std::string& name, tensor::Shape shape, GradientStart start = GradientStart::zeroed);
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
  // Every gradient zero.
  void zero_grad() const;
  // A training step's start: the `zeroed` gradients (and the padding between) are set to zero, the
  // `overwritten` ones are left for their first product (FirstWrite); finish_gradients() zeroes any of those
  // no product wrote, before the gradients are read as a whole (clipping, the optimizer, all-reduce).
  void zero_grad_lazily() const;
  void finish_gradients() const;
  FirstWrite first_write(std::vector<size_t> indices) const { return FirstWrite(pending_, std::move(indices)); }

 private:
  std::vector<Parameter> params_;
  int64_t total_ = 0;
  int64_t count_ = 0;
  tensor::Tensor values_;
  tensor::Tensor grads_;
  std::vector<std::pair<int64_t, int64_t>> zeroed_runs_;  // [begin, end) of the flat gradients outside `overwritten`
  std::shared_ptr<std::vector<uint8_t>> pending_ = std::make_shared<std::vector<uint8_t>>();  // per parameter
};

}  // namespace tt::nn
