// Inside nn::Transformer: the layers, and the batch upload shared by its training and decoding files.
// Not for use outside lib/nn.
#pragma once

#include <string>
#include <vector>

#include "nn/decoder.h"
#include "nn/embedding.h"
#include "nn/encoder.h"
#include "nn/transformer.h"
#include "ops/embedding.h"
#include "ops/copy.h"
#include "util/error.h"

namespace tt::nn {

using tensor::Shape;
using tensor::Tensor;

struct Transformer::Impl {
  explicit Impl(backend::Backend& backend) : scratch(backend), encode_group(backend) {}
  Embeddings embeddings;
  Encoder encoder;
  Decoder decoder;
  tensor::Arena scratch;  // per-layer temporaries (backward; inference forward), reset after each layer
  tensor::Arena encode_group;  // inference: one group of sentences' encoder activations, reset after the group

  void declare(ParameterSet& params, const ModelConfig& config) {
    embeddings.declare(params, config);
    encoder.declare(params, config);
    decoder.declare(params, config);
  }
};

namespace detail {

// The batch's device tensors, validated against the model.
struct DeviceBatch {
  Tensor src, src_lengths, tgt_in, tgt_out, tgt_lengths;
};

inline void check_lengths(const std::vector<int32_t>& lengths, int B, int max, const char* what) {
  if (static_cast<int>(lengths.size()) != B)
    throw Error(std::string(what) + ": expected " + std::to_string(B) + " lengths, got " +
                std::to_string(lengths.size()));
  for (int b = 0; b < B; ++b)
    if (lengths[static_cast<size_t>(b)] < 0 || lengths[static_cast<size_t>(b)] > max)
      throw Error(std::string(what) + " of sentence " + std::to_string(b) + " is " +
                  std::to_string(lengths[static_cast<size_t>(b)]) + ", outside [0, " + std::to_string(max) + "]");
}

inline Tensor upload_lengths(tensor::Arena& arena, const std::vector<int32_t>& lengths, int B, int max, const char* what) {
  check_lengths(lengths, B, max, what);
  Tensor t = arena.allocate(Shape{B}, tensor::DType::i32);
  ops::upload(t, lengths);
  return t;
}

inline DeviceBatch upload(const Batch& batch, const Embeddings& embeddings, tensor::Arena& arena, bool targets) {
  if (batch.B <= 0 || batch.S <= 0 || batch.T <= 0)
    throw Error("empty batch (B = " + std::to_string(batch.B) + ", S = " + std::to_string(batch.S) +
                ", T = " + std::to_string(batch.T) + ")");
  DeviceBatch d;
  d.src = ops::upload_ids(arena, batch.src, Shape{batch.B, batch.S}, embeddings.vocab_size(Side::source), "source");
  d.src_lengths = upload_lengths(arena, batch.src_lengths, batch.B, batch.S, "source length");
  d.tgt_in = ops::upload_ids(arena, batch.tgt_in, Shape{batch.B, batch.T}, embeddings.vocab_size(Side::target),
                             "target input");
  d.tgt_lengths = upload_lengths(arena, batch.tgt_lengths, batch.B, batch.T, "target length");
  if (targets)
    d.tgt_out = ops::upload_ids(arena, batch.tgt_out, Shape{batch.B * batch.T}, embeddings.vocab_size(Side::target),
                                "target output");
  return d;
}

}  // namespace detail
}  // namespace tt::nn
