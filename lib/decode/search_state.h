// The search's per-sentence state and what it reads back per step, shared by beam search (search.cpp)
// and sampling (sampling.cpp). Internal to lib/decode.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "decode/search.h"

namespace tt::decode::detail {

struct Open {
  std::vector<int32_t> tokens;
  float log_prob = 0;
  int row = 0;                   // decoder row
  std::vector<float> attention;  // [tokens.size(), source size]
  int sample = 0;                // sampling: which of the sentence's samples (its random stream)
};

// Ranked by total log-probability, then by the step's own log-probability (so that within one
// hypothesis the order is exactly the top-k order of its row), then hypothesis, then token.
struct Candidate {
  float log_prob;
  float step_log_prob;
  int hyp;
  int32_t token;
  bool better_than(const Candidate& o) const {
    if (log_prob != o.log_prob) return log_prob > o.log_prob;
    if (step_log_prob != o.step_log_prob) return step_log_prob > o.step_log_prob;
    if (hyp != o.hyp) return hyp < o.hyp;
    return token < o.token;
  }
};

class ConstraintTracker;

struct Sentence {
  size_t index = 0;     // into the caller's sources
  uint64_t stream = 0;  // sampling: the sentence's random stream (its line, so batches do not matter)
  int source_size = 0;  // ids including eos
  int max_len = 0;      // most target tokens before eos
  int prefix = 0;       // forced target tokens (search()'s prefixes) every hypothesis starts with
  int alternative = -1;  // SearchOptions::alternatives: which of the sentence's alternatives this is
  std::vector<Open> open;
  std::vector<Hypothesis> finished;
  std::shared_ptr<const ConstraintTracker> constraints;  // --constraints (null: none)
};

// What the search reads back per step: each row's `width` best tokens (best first) and its </s> value;
// for sampling from the whole vocabulary, every row's log-probabilities instead ([rows, V] in `all`).
struct RowBest {
  int width = 0;
  std::vector<float> values, eos;
  std::vector<float> shift;  // per row, what was subtracted from its logits (empty: they were log-probabilities)
  std::vector<int32_t> tokens;
  std::vector<float> all;
  int vocab = 0;  // the columns of `all`
  // Per row, the tokens it may not take this step (SearchOptions::no_repeat_ngram), sorted; empty when off.
  std::vector<std::vector<int32_t>> banned;
  // Per row, the tokens that would advance its sentence's constraints, with their log-probabilities
  // (constraints.h); a row whose every phrase is met has none. Empty when no sentence has constraints.
  std::vector<std::vector<std::pair<int32_t, float>>> required;
  bool is_banned(int row, int32_t token) const {
    if (banned.empty()) return false;
    const auto& b = banned[static_cast<size_t>(row)];
    return std::binary_search(b.begin(), b.end(), token);
  }
};

// The chosen candidates (best first) become s's finished and open hypotheses; returns whether s is done
// (its beam empty, or the stop rule of search.h).
bool take(Sentence& s, const std::vector<Candidate>& best, const std::vector<float>& attention, int S,
          const SearchOptions& o, const SpecialIds& ids);
// Best score first, ties in the order found.
void sort_finished(std::vector<Hypothesis>& finished);

// h's attention with the step's row appended (SearchOptions::attention), else empty.
std::vector<float> extend_attention(const Open& h, const std::vector<float>& attention, int S, int source_size,
                                    bool keep);

}  // namespace tt::decode::detail
