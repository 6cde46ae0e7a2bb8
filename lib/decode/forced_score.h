// The model's log-probability of given targets (CTranslate2's score_batch, marian-scorer, fairseq
// --score-reference): each target is fed to the decoder one token at a time through the same StepScorer
// and KV cache the search uses, and the same float operations add up its log-probabilities, so scoring
// the search's own output gives back the search's score, bit for bit.
#pragma once

#include <cstdint>
#include <vector>

#include "decode/scorer.h"
#include "decode/search.h"

namespace tt::decode {

struct TargetScore {
  float log_prob = 0;                // natural log, the tokens and </s>
  float score = 0;                   // length-normalised as the search ranks (SearchOptions' penalty)
  std::vector<float> token_log_probs;  // each token's, then </s>'s
};

// sources: ids ending in </s>, none empty; targets: ids without <s>/</s>, each at most
// scorer.max_positions() - 1 long (else tt::Error). One TargetScore per pair, in order.
std::vector<TargetScore> score_targets(StepScorer& scorer, const std::vector<std::vector<int32_t>>& sources,
                                       const std::vector<std::vector<int32_t>>& targets, const SearchOptions& o,
                                       const SpecialIds& ids);

}  // namespace tt::decode
