// What every layer's forward needs besides its input: the arena its activations come from and where its
// dropout masks come from. Dropout is on only in training; each (layer, place) has its own site, so masks
// never repeat across layers or steps (util/rng.h).
#pragma once

#include <cstdint>

#include "backend/backend.h"
#include "tensor/arena.h"
#include "util/rng.h"

namespace tt::nn {

struct StepContext {
  tensor::Arena& arena;   // activations (kept for backward) and forward temporaries
  bool dropout = false;   // training mode
  uint64_t seed = 0;
  int64_t step = 0;
  uint64_t batch = 0;     // the batch's index within the step, over all ranks (util::rng_stream)
  // Inference only (nothing saved for backward): a layer's temporaries come from here and are released
  // after the layer, so encoding a batch needs one layer's activations, not all of them. Null: `arena`.
  tensor::Arena* layer_scratch = nullptr;
  // Training: room for what one layer's forward needs only until it returns (the fp32 values whose bf16
  // rounding alone is saved, Backend::bf16_storage: FFN hidden layer, attention's q, k, v and context),
  // reset by that layer. Null: none.
  tensor::Arena* temporaries = nullptr;

  // Where a layer that saves for backward puts the fp32 values it saves only rounded: `temporaries` when
  // the backend stores bf16 activations now, else null (save fp32 as usual).
  tensor::Arena* bf16_temporaries(backend::Backend& be) const {
    return temporaries && be.bf16_storage() ? temporaries : nullptr;
  }

  // The rate to use: `rate` in training, 0 in evaluation / inference.
  float rate(float rate) const { return dropout ? rate : 0.0f; }
  backend::DropoutKey key(uint32_t site) const {
    return backend::DropoutKey{seed, util::rng_stream(util::RngPurpose::dropout, static_cast<uint64_t>(step), site, batch)};
  }
};

// Dropout sites: embeddings 1 (source) and 2 (target); encoder layer l uses kEncoderSites + 8 l + place,
// decoder layer l kDecoderSites + 8 l + place (places are listed in the layer files).
constexpr uint32_t kEncoderSites = 16;
constexpr uint32_t kDecoderSites = 1u << 16;

}  // namespace tt::nn
