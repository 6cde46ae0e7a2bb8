// One JSON object per sentence, one per line (JSON Lines), written as soon as the sentence is done, so
// memory stays flat on any input. Two layouts (the schema is schema/attnviz.schema.json and man tt-attnviz):
//   json:    {"id", "src_tokens", "tgt_tokens", "translation", ["score"], "heads", "reduce", and per kind kept
//             "<kind>_layers" and "encoder_self" [layers][heads][S][S], "decoder_self" [layers][heads][T][T],
//             "cross" [layers][heads][T][S]}
//   bertviz: {"id", "encoder_tokens", "decoder_tokens", "translation", "encoder_attention", "decoder_attention",
//             "cross_attention"}: per layer a [1, heads, n, m] array, what bertviz's head_view/model_view take.
// Weights are printed with `precision` decimals, trailing zeros dropped (0.25, 0, 1).
#pragma once

#include <optional>
#include <string>

#include "viz/attention_view.h"

namespace tt::viz {

enum class JsonLayout { json, bertviz };

struct SentenceInfo {
  size_t id = 0;  // 0-based input line
  std::string translation;
  std::optional<float> score;  // the search's length-normalised score (none when teacher-forced)
};

// The line for one sentence, ending in '\n'. precision: 0..9 decimals.
std::string json_line(const AttentionView& view, const SentenceInfo& info, int precision,
                      JsonLayout layout = JsonLayout::json);

// Appends `value` with `precision` decimals, trailing zeros (and a trailing '.') dropped.
void append_number(std::string& out, float value, int precision);

}  // namespace tt::viz
