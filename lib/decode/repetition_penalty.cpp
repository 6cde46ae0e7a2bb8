#include "decode/repetition_penalty.h"

#include <algorithm>

#include "ops/copy.h"
#include "ops/softmax.h"
#include "tensor/arena.h"

namespace tt::decode {

void penalize_repeats(const tensor::Tensor& scores, const std::vector<std::vector<int32_t>>& seen, float penalty,
                      bool logits) {
  const int64_t rows = scores.dim(0), V = scores.dim(1);
  // Each (row, token) once, however often the token came.
  std::vector<int64_t> at;
  std::vector<int32_t> tokens;
  for (int64_t r = 0; r < rows && r < static_cast<int64_t>(seen.size()); ++r) {
    tokens = seen[static_cast<size_t>(r)];
    std::sort(tokens.begin(), tokens.end());
    tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
    for (int32_t t : tokens)
      if (t >= 0 && t < V) at.push_back(r * V + t);
  }
  if (at.empty()) return;
  // A few values per row: read back in one gather, penalised, written back in one scatter.
  tensor::Arena scratch(scores.backend());
  std::vector<float> values = ops::download_at(scores, at, scratch);
  for (float& x : values) x = x < 0 ? x * penalty : x / penalty;
  ops::upload_at(scores, at, values, scratch);
  if (!logits) ops::log_softmax(scores);
}

}  // namespace tt::decode
