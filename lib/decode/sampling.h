// Sampling instead of beam search (SearchOptions::sampling; fairseq --sampling, Marian --output-sampling,
// CTranslate2 sampling_topk): each open hypothesis draws its next token from the model's distribution,
// restricted to its sampling_topk best tokens (0: the whole vocabulary), each log-probability divided by
// the temperature. At the first step a sentence's one hypothesis becomes `beam` independent samples.
// Draw t of sample k uses Philox number (t * 1024 + k) of the sentence's stream (its input line), so
// the samples do not depend on the batch, the threads or the workers. A hypothesis keeps the model's
// own (untempered) log-probabilities; finished samples are ranked by the length-normalised score.
#pragma once

#include <vector>

#include "decode/search.h"
#include "decode/search_state.h"

namespace tt::decode::detail {

inline constexpr int kMaxSamples = 1024;  // samples per sentence (the beam), so draws never share a number

// One step of sentence s; returns whether it is done (no open sample left).
bool sample_step(Sentence& s, const RowBest& rows, const std::vector<float>& attention, int S,
                 const SearchOptions& o, const SpecialIds& ids);

}  // namespace tt::decode::detail
