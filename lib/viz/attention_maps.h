// Every attention map of a sentence pair, as the model used it: one teacher-forced forward pass
// (nn::Transformer::forward_logits) over (source, <s> + target) with attention capture on. For a target the
// search produced, these are exactly the weights the search saw step by step (the full pass equals the
// incremental one; tests/viz checks it against decode_step captures), so no search state needs keeping.
// Maps are cropped to each sentence's own lengths (padding never appears) and stored row-major:
//   encoder_self [Le][H][S][S]   decoder_self [Ld][H][T][T]   cross [Ld][H][T][S]
// S = source ids including </s>; T = decoder inputs <s> y_1 .. y_n (row t predicts y_{t+1}, the last </s>).
#pragma once

#include <cstdint>
#include <vector>

#include "nn/transformer.h"
#include "tensor/arena.h"

namespace tt::viz {

enum class Kind { encoder_self, decoder_self, cross };
inline constexpr Kind all_kinds[] = {Kind::encoder_self, Kind::decoder_self, Kind::cross};
const char* kind_name(Kind kind);  // "encoder_self", "decoder_self", "cross"

struct KindSet {
  bool encoder_self = true, decoder_self = true, cross = true;
  bool has(Kind k) const { return k == Kind::encoder_self ? encoder_self : k == Kind::decoder_self ? decoder_self : cross; }
};

struct SentenceAttention {
  std::vector<int32_t> source;  // ids, ending in </s>
  std::vector<int32_t> target;  // decoder inputs: <s> then the target ids (no </s>)
  int layers_enc = 0, layers_dec = 0, heads = 0;
  std::vector<float> encoder_self, decoder_self, cross;  // empty when not captured
  int S() const { return static_cast<int>(source.size()); }
  int T() const { return static_cast<int>(target.size()); }
  // The rows x cols of one map of `kind`, and where layer l, head h starts in its vector.
  int rows(Kind k) const { return k == Kind::encoder_self ? S() : T(); }
  int cols(Kind k) const { return k == Kind::decoder_self ? T() : S(); }
  int layers(Kind k) const { return k == Kind::encoder_self ? layers_enc : layers_dec; }
  const std::vector<float>& maps(Kind k) const;
  std::vector<float>& maps(Kind k);
  size_t offset(Kind k, int layer, int head) const {
    return (static_cast<size_t>(layer) * heads + head) * static_cast<size_t>(rows(k)) * cols(k);
  }
};

// One forward pass over a batch. sources: ids ending in </s> (non-empty); targets: ids without <s>/</s>
// (may be empty). Only the kinds in `kinds` are captured. Uses (and resets) `arena`. Throws
// tt::ConfigError if a sentence is longer than the model's positions.
std::vector<SentenceAttention> capture_attention(nn::Transformer& model, tensor::Arena& arena,
                                                 const std::vector<std::vector<int32_t>>& sources,
                                                 const std::vector<std::vector<int32_t>>& targets,
                                                 const KindSet& kinds = {});

}  // namespace tt::viz
