// SearchOptions::repetition_penalty: the CTRL penalty (Keskar et al. 2019) in the form CTranslate2 and
// Transformers use. Before a step's tokens are chosen, every token a hypothesis already holds has its
// score divided by the penalty where positive and multiplied by it where negative, so with a penalty
// above 1 it is less likely to come again (below 1, more). The scores are the model's logits (one model)
// or the ensemble's mean log-probabilities, which are normalised again afterwards.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace tt::decode {

// scores [rows, V] on any device; seen[r]: the tokens row r holds (any order, repeats allowed).
// logits: the scores are logits (normalised later); else log-probabilities, normalised again here.
void penalize_repeats(const tensor::Tensor& scores, const std::vector<std::vector<int32_t>>& seen, float penalty,
                      bool logits);

}  // namespace tt::decode
