// The whole encoder-decoder Transformer (Vaswani et al. 2017, §3): embeddings (scaled by √d_model, plus
// sinusoidal or learned positions), N encoder and N decoder layers (post-LN as in the paper or pre-LN), the
// output projection tied to the (target) embedding matrix, and label-smoothed cross-entropy.
//
// Training: forward_backward() runs forward and the explicit backward (each layer's backward written beside its forward, no autodiff graph) on one batch; every
// activation comes from the caller's per-step Arena, so a step allocates nothing once the arena has grown.
// Inference: encode() once, then decode_step() one target position at a time with a KV cache (DecodeState);
// the logits equal those of the full forward pass (tested to 1e-5).
//
// Parameter names (the safetensors names; ParameterSet order):
//   embeddings.shared.weight [V, D]                          (shared_vocab)
//   embeddings.src.weight [Vs, D], embeddings.tgt.weight [Vt, D]   (separate vocabularies; tgt tied to output)
//   embeddings.positions.weight [max_positions, D]            (learned positions only; shared by both sides)
//   encoder.layers.{i}.self_attn.{q,k,v,out}_proj.{weight [D, D], bias [D]}
//   encoder.layers.{i}.self_attn_norm.{weight,bias} [D]
//   encoder.layers.{i}.ffn.fc1.{weight [F, D], bias [F]}, encoder.layers.{i}.ffn.fc2.{weight [D, F], bias [D]}
//   encoder.layers.{i}.ffn_norm.{weight,bias} [D]
//   decoder.layers.{i}.self_attn.*, self_attn_norm.*, cross_attn.{q,k,v,out}_proj.*, cross_attn_norm.*, ffn.*, ffn_norm.*
//   encoder.final_norm.{weight,bias}, decoder.final_norm.{weight,bias}   (pre-LN only)
// Linear weights are [out, in] (PyTorch layout): y = x W^T + b. The output projection has no bias.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "nn/batch.h"
#include "nn/config.h"
#include "nn/decode_state.h"
#include "nn/loss.h"
#include "nn/params.h"
#include "tensor/arena.h"
#include "tensor/tensor.h"

namespace tt::nn {

// Where dropout masks come from: stream = rng_stream(dropout, step, site, batch) for a distinct site per
// (layer, place); batch is the batch's index within the step over all ranks. dropout = false: evaluation
// mode (no dropout anywhere).
struct StepRng {
  uint64_t seed = 0;
  int64_t step = 0;
  bool dropout = true;
  uint64_t batch = 0;
};

// Optional capture of attention weights (after softmax, before attention dropout) into tensors the caller
// allocates on the model's backend. Capturing copies the weights; it never changes results. Leave a vector
// empty (or a tensor undefined) to skip it.
//   encoder[l]: [B, H, S, S]   decoder_self[l]: [B, H, Tq, Tk]   decoder_cross[l]: [B, H, Tq, S]
// In decode_step(), Tq = 1 and Tk = the cached length including this step (the tensor must have Tk columns).
struct AttentionCapture {
  std::vector<tensor::Tensor> encoder;
  std::vector<tensor::Tensor> decoder_self;
  std::vector<tensor::Tensor> decoder_cross;
};

enum class Usage { training, inference };

class Transformer {
 public:
  // Validates the config, declares and allocates the parameters (values zero: call init_parameters or
  // load weights). An inference model allocates no gradients (half the memory) and cannot train.
  Transformer(const ModelConfig& config, backend::Backend& backend, Usage usage = Usage::training);
  // An inference model on `backend` that reads `weights`' parameters in place (no copy): one more
  // decoding worker with its own backend (threads, scratch, packed weights). Both backends are CPU
  // backends; `weights` must outlive this model and not change while it decodes.
  Transformer(const Transformer& weights, backend::Backend& backend);
  ~Transformer();
  Transformer(const Transformer&) = delete;
  Transformer& operator=(const Transformer&) = delete;

  const ModelConfig& config() const { return config_; }
  Usage usage() const { return usage_; }
  ParameterSet& params() { return params_; }
  const ParameterSet& params() const { return params_; }
  backend::Backend& backend() const { return backend_; }

  // The parameter names and shapes this config declares, in registry order, without allocating anything
  // (lets a test compare the big presets with ModelConfig::parameter_count()).
  static std::vector<std::pair<std::string, tensor::Shape>> parameter_shapes(const ModelConfig& config);

  // The paper's initialisation from `seed` (nn/init.h).
  void init_parameters(uint64_t seed);

  // Forward + backward on one batch (training models only). Parameter gradients ACCUMULATE (+=) the
  // gradient of grad_scale * loss_sum (the caller zeroes them between optimizer steps). The step's saved
  // activations live in `arena` and in this call only; reset the arena after it.
  LossStats forward_backward(const Batch& batch, tensor::Arena& arena, const StepRng& rng, float grad_scale);
  // Loss without dropout and without gradients.
  LossStats evaluate(const Batch& batch, tensor::Arena& arena);

  // Inference: full teacher-forced forward, no dropout. Returns logits [B, T, V] (in `arena`).
  tensor::Tensor forward_logits(const Batch& batch, tensor::Arena& arena, AttentionCapture* capture = nullptr);

  // Inference: run the encoder on host ids src [B, S] (right-padded) with lengths [B].
  EncoderOutput encode(const std::vector<int32_t>& src, const std::vector<int32_t>& src_lengths, int B, int S,
                       tensor::Arena& arena, AttentionCapture* capture = nullptr);
  // A fresh decoding state for `encoded` (rows = encoded.B, length 0), room for max_rows hypotheses and
  // max_length target positions. Its caches live in `cache_arena` (keep it alive, do not reset it, while
  // decoding); cross-attention K/V are computed here once.
  DecodeState start_decoding(const EncoderOutput& encoded, int max_rows, int max_length,
                             tensor::Arena& cache_arena);
  // Feed one token per row (tokens.size() == state.rows(); the first step feeds bos) and return the next-token
  // logits [rows, V] (log-probabilities if log_probs), from `step_arena` (may be reset after each step).
  tensor::Tensor decode_step(DecodeState& state, const std::vector<int32_t>& tokens, tensor::Arena& step_arena,
                             bool log_probs = false, AttentionCapture* capture = nullptr) {
    return decode_steps(state, tokens, 1, step_arena, log_probs, capture);
  }
  // Feeds n positions per row in one pass (teacher forcing, e.g. a target prefix), time-major: tokens[t *
  // rows + r] is row r's token at position length() + t. Returns the logits after each, [n * rows, V] in
  // the same order, bit for bit what n decode_step() calls would give on a row-invariant backend. Capture
  // tensors have n * rows rows.
  tensor::Tensor decode_steps(DecodeState& state, const std::vector<int32_t>& tokens, int n,
                              tensor::Arena& step_arena, bool log_probs = false, AttentionCapture* capture = nullptr);
  // A vocabulary shortlist: from now on the state's steps return [rows, columns.size()], column j being
  // target id columns[j] (ids in range; the output layer's rows gathered once into `arena`, which must
  // outlive the state). A product packs the gathered rows at their address: call the backend's
  // forget_packed(restricted_table(state)) before that memory holds anything else.
  void restrict_output(DecodeState& state, const std::vector<int32_t>& columns, tensor::Arena& arena);
  static const float* restricted_table(const DecodeState& state);
  // Keep / duplicate hypotheses: new row i continues old row index[i] (index.size() <= max_rows). Also
  // permutes the cross-attention K/V and source lengths, so rows may come from different sentences.
  void reorder(DecodeState& state, const std::vector<int32_t>& index);

  struct Impl;  // the layers (nn/transformer_impl.h), shared by the training and decoding files

 private:
  ModelConfig config_;
  Usage usage_;
  backend::Backend& backend_;
  ParameterSet params_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tt::nn
