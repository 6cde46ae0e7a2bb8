// Linear layer y = x W^T + b with W [out, in] (PyTorch layout, the safetensors convention), and a group of
// Linears fed the same input (q/k/v projections) that runs as ONE GEMM when their weights and biases sit
// adjacent in the flat parameter buffer (they are declared so; alignment padding can break adjacency for
// odd sizes, and then the group runs one GEMM per member into consecutive blocks).
#pragma once

#include <string>
#include <vector>

#include "nn/params.h"
#include "tensor/tensor.h"

namespace tt::nn {

class Linear {
 public:
  // Phase 1 (declare names) and phase 2 (after ParameterSet::allocate: take the views).
  void declare_weight(ParameterSet& params, const std::string& prefix, int in, int out);
  void declare_bias(ParameterSet& params, const std::string& prefix);
  void declare(ParameterSet& params, const std::string& prefix, int in, int out, bool bias = true) {
    declare_weight(params, prefix, in, out);
    if (bias) declare_bias(params, prefix);
  }
  void bind(const ParameterSet& params);

  int in() const { return in_; }
  int out() const { return out_; }
  const tensor::Tensor& weight() const { return w_; }
  const tensor::Tensor& bias() const { return b_; }  // undefined without bias
  const tensor::Tensor& bias_grad() const { return db_; }

  // x [..., in] -> y [..., out]
  void forward(const tensor::Tensor& y, const tensor::Tensor& x) const;
  // dW += dy^T x (= on the step's first call after ParameterSet::zero_grad_lazily), db += sum dy; dx = dy W
  // (or += when accumulate_dx; skipped if dx undefined). Saved = x.
  void backward(const tensor::Tensor& dx, const tensor::Tensor& dy, const tensor::Tensor& x,
                bool accumulate_dx = false) const;
  // The same without the bias, for a caller whose fused kernel adds it (and takes its gradient) instead.
  void forward_without_bias(const tensor::Tensor& y, const tensor::Tensor& x) const;
  void backward_without_bias(const tensor::Tensor& dx, const tensor::Tensor& dy, const tensor::Tensor& x,
                             bool accumulate_dx = false) const;

 private:
  friend class LinearGroup;
  int in_ = 0, out_ = 0;
  size_t w_index_ = 0, b_index_ = 0;
  bool has_bias_ = false;
  tensor::Tensor w_, b_, dw_, db_;
  FirstWrite dw_first_;  // dw_ is overwritten by the step's first backward (ParameterSet::zero_grad_lazily)
};

// Members share the input; output of N rows holds every member's output. fused(): [N, sum out] with member i
// in columns [offset_i, offset_i + out_i); otherwise member i is the block [N, out_i] at N * offset_i.
class LinearGroup {
 public:
  void bind(const ParameterSet& params, std::vector<const Linear*> members);
  bool fused() const { return fused_; }
  int out() const { return total_out_; }

  void forward(const tensor::Tensor& y, const tensor::Tensor& x) const;  // y has N * out() elements
  // The same without the biases, for a caller that adds each member's bias in a pass of its own.
  void forward_without_bias(const tensor::Tensor& y, const tensor::Tensor& x) const;
  void backward(const tensor::Tensor& dx, const tensor::Tensor& dy, const tensor::Tensor& x,
                bool accumulate_dx = false) const;
  // Where member i's output starts inside y (N rows) and its row stride.
  int64_t member_offset(int i, int64_t N) const;
  int64_t member_ld(int i) const;

 private:
  using LinearForward = void (Linear::*)(const tensor::Tensor&, const tensor::Tensor&) const;
  void forward(const tensor::Tensor& y, const tensor::Tensor& x, LinearForward member_forward) const;

  std::vector<const Linear*> members_;
  std::vector<int> offsets_;
  int total_out_ = 0;
  bool fused_ = false;
  Linear merged_;
};

}  // namespace tt::nn
