// Word alignments from cross-attention, in the formats tt-translate --alignment prints (Marian's): hard
// "s-t" pairs (the argmax source position of each target position; Moses / fast_align order, </s> left
// out on both sides) and soft (one comma-separated row of source weights per target position, </s>
// included, rows separated by spaces). Rows are re-labelled from decoder inputs to predicted tokens: row t
// is the attention while predicting target t (so row 0 is the <s> step), the last row the </s> step.
#pragma once

#include <string>
#include <vector>

#include "viz/attention_maps.h"
#include "viz/attention_view.h"

namespace tt::viz {

struct Alignment {
  int rows = 0, cols = 0;   // target positions + 1 (</s>), source positions (with </s>)
  std::vector<float> data;  // [rows, cols]
};

// Mean over `layers` (decoder) and `heads` of the cross-attention; with `merge_words` rows and columns
// are words (merged as in attention_view.h), target words grouped by the predicted pieces `tgt_pieces`
// (target pieces without <s>, then </s>). Needs a.cross captured.
Alignment cross_alignment(const SentenceAttention& a, const std::vector<int>& layers, const std::vector<int>& heads,
                          bool merge_words, const Tokens& src, const Tokens& tgt_pieces);

std::string hard_alignment(const Alignment& m);
std::string soft_alignment(const Alignment& m);

}  // namespace tt::viz
