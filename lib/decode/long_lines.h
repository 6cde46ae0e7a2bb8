// A line longer than the model takes is translated in parts and rejoined, never cut (a line in is a line
// out, with nothing dropped). The rule, in order:
//   1. sentences: the text is split after a sentence end — '.', '!', '?', '…', '。', '！' or '？', then any
//      closing quotes or brackets — that is followed by white space (so "3.5" and "e.g.x" stay whole);
//   2. each sentence is a part of its own (models are trained on single sentences: given two at once, the
//      demo's model fused them and dropped words);
//   3. a sentence longer than the limit is cut at the last word start (a piece beginning with '▁') that
//      keeps the part within the limit, or at the limit itself when the word is longer than that.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "decode/search.h"

namespace tt::decode {

// The line's sentences by rule 1, each with its trailing white space; joined they give the line back.
std::vector<std::string> split_sentences(const std::string& line);

// Rules 2 and 3 over the sentences' ids (without </s>): parts of at most `limit` ids, in order, that
// together hold every id once; no part holds pieces of two sentences. `starts_word(id)` says whether a
// piece begins a word.
std::vector<std::vector<int32_t>> pack_parts(const std::vector<std::vector<int32_t>>& sentences, int limit,
                                             const std::function<bool(int32_t)>& starts_word);

// The hypotheses of a line searched in parts (`sources`: each part's ids with its </s>): the k-th joins
// every part's k-th best (a part with fewer gives its last), tokens in order, scores and log-probabilities
// summed (with --length-penalty none, the line's log-probability). With `attention`, each part's block
// goes to its offsets in one [T + 1, S] matrix over the whole line (S: the parts' sources without their
// </s>, then one </s>; the last row is the last part's </s> row); a part's own </s> row and column go.
std::vector<Hypothesis> join_parts(const std::vector<std::vector<Hypothesis>>& parts,
                                   const std::vector<std::vector<int32_t>>& sources, bool attention);

}  // namespace tt::decode
