// What incremental decoding keeps between steps (beam search, tt-attnviz): per decoder layer the
// self-attention K/V cache and the cross-attention K/V of the source, and how rows find their keys.
// Only nn::Transformer's decoding functions read or write its inside.
//
// Nothing cached moves when beam search reorders hypotheses: a row's past keys are addressed through its
// ancestry (the cache slot each of its positions was written to), and its source through its sentence.
// reorder() is then O(rows * length) integers on the host instead of copying every layer's caches.
// The self-attention caches hold the time slices one after the other, each as long as the rows then
// decoding: the memory a batch touches is what its hypotheses wrote, packed from the start, so a
// reused cache keeps only the largest batch's worth resident (with slices of max_rows each, the union of
// all batches' slices stayed resident).
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/arena.h"
#include "tensor/tensor.h"

namespace tt::nn {

class Transformer;

// The encoder's output for a batch of source sentences (lives in the arena passed to encode()).
struct EncoderOutput {
  int B = 0, S = 0;
  tensor::Tensor memory;       // [B, S, D]
  tensor::Tensor src_lengths;  // [B] i32, on the device
};

// Where a decoding step's queries find their keys (uploaded once per step, shared by every layer).
struct StepKeys {
  int first_position = 0;                   // the position of the step's first new token (the cache's length)
  int positions = 1;                        // new positions per row in this step
  tensor::Tensor self_rows, self_counts;    // [rows, t + 1] cache rows (slice j's start + slot), [rows] = t + 1
  int64_t first_row = 0;                    // cache row of the step's first new key: its queries' K/V, in order
  tensor::Tensor cross_rows, cross_counts;  // [rows, S] memory rows (sentence * S + j), [rows] source lengths
};

// One decoder layer's caches.
struct LayerCache {
  tensor::Tensor self_k, self_v;    // [max_length * max_rows, D]: time slices one after the other
  tensor::Tensor cross_k, cross_v;  // [B, S, D] one per source sentence
  int max_rows = 0, S = 0;
};

// Incremental decoding state. Rows are hypotheses; reorder() selects / duplicates rows (beam search).
class DecodeState {
 public:
  int rows() const { return rows_; }
  int length() const { return length_; }  // target positions decoded so far
  int max_length() const { return max_length_; }

 private:
  friend class Transformer;
  // Writes the slots of the next `n` positions (row r at slot r of each new time slice) and uploads the
  // key tables of the n * rows queries, time-major: query t * rows + r is position length() + t of row r
  // and sees that row's keys up to it. One position uses the state's own tables; more (a target prefix
  // in one pass) take theirs from `arena`.
  StepKeys begin_step(int n, tensor::Arena& arena);
  // New row i continues old row index[i].
  void select_rows(const std::vector<int32_t>& index);

  int rows_ = 0, max_rows_ = 0, length_ = 0, max_length_ = 0, B_ = 0, S_ = 0;
  // Per decoder layer. self_k/self_v hold time slices one after the other: position t of the row in slot s
  // is cache row slice_start_[t] + s, and slice t has as many rows as were decoding then. cross_k/cross_v
  // are [B, S, D], one per source sentence.
  std::vector<LayerCache> caches_;
  // Host: per row, its sentence, and the slot of each of its positions ([max_rows, max_length]).
  std::vector<int32_t> sentence_, slots_, src_lengths_host_;  // src_lengths_host_: [B]
  std::vector<int64_t> slice_start_;                          // [max_length + 1]: cache row of each time slice
  std::vector<int32_t> host_rows_, host_counts_;              // upload staging
  tensor::Tensor self_rows_, self_counts_, cross_rows_, cross_counts_;  // device copies, capacity max_rows
  bool cross_stale_ = true;  // cross tables need uploading (rows changed)
  // Transformer::restrict_output: the output layer's rows (and bias) of a vocabulary shortlist; undefined: all.
  tensor::Tensor output_table_, output_bias_;
};

}  // namespace tt::nn
