// What incremental decoding keeps between steps (beam search, tt-attnviz): the encoder's output and,
// per decoder layer, the self-attention K/V cache and the cross-attention K/V of the source.
// Only nn::Transformer's decoding functions read or write its inside.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace tt::nn {

class Transformer;

// The encoder's output for a batch of source sentences (lives in the arena passed to encode()).
struct EncoderOutput {
  int B = 0, S = 0;
  tensor::Tensor memory;       // [B, S, D]
  tensor::Tensor src_lengths;  // [B] i32, on the device
};

// Incremental decoding state: per decoder layer the self-attention K/V cache and the cross-attention K/V
// of the source (computed once). Rows are hypotheses; reorder() selects / duplicates rows (beam search).
class DecodeState {
 public:
  int rows() const { return rows_; }
  int length() const { return length_; }  // target positions decoded so far
  int max_length() const { return max_length_; }

 private:
  friend class Transformer;
  int rows_ = 0, max_rows_ = 0, length_ = 0, max_length_ = 0, S_ = 0;
  // Per decoder layer. self_k/self_v are time-major [max_length, max_rows, D], so one step's K/V rows are
  // one contiguous block; cross_k/cross_v are [max_rows, S, D]. reorder() gathers into the spare tensors
  // and swaps them in (no copy back).
  std::vector<tensor::Tensor> self_k_, self_v_, cross_k_, cross_v_;
  tensor::Tensor spare_self_, spare_cross_;
  std::vector<int32_t> src_lengths_host_;  // [rows]
  tensor::Tensor src_lengths_;             // [max_rows] i32 on the device
  tensor::Tensor index_self_, index_cross_;  // [max_length * max_rows], [max_rows] i32 scratch for reorder
  std::vector<int32_t> host_index_;
};

}  // namespace tt::nn
