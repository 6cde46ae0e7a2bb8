// The host-side batch: token ids, right-padded with pad_id, as the batcher hands them to the model.
//   src    [B, S]  source ids (no bos; eos at the end of each sentence if the data has it)
//   tgt_in [B, T]  bos + y (decoder input, teacher forcing)
//   tgt_out[B, T]  y + eos (what the decoder must predict), pad beyond tgt_lengths
#pragma once

#include <cstdint>
#include <vector>

namespace tt::nn {

struct Batch {
  int B = 0, S = 0, T = 0;
  std::vector<int32_t> src, src_lengths;               // [B, S], [B]
  std::vector<int32_t> tgt_in, tgt_out, tgt_lengths;   // [B, T], [B, T], [B]
  int32_t pad_id = 0;  // the id that pads src/tgt_in/tgt_out (ModelConfig::pad_id)

  // Non-pad entries of tgt_out: the number of tokens the loss is summed over.
  int64_t target_tokens() const {
    int64_t n = 0;
    for (int32_t id : tgt_out) n += id != pad_id;
    return n;
  }
};

}  // namespace tt::nn
