#include "decode/forced_score.h"

#include <algorithm>
#include <optional>

#include "decode/length_penalty.h"
#include "ops/copy.h"
#include "ops/softmax.h"
#include "util/error.h"

namespace tt::decode {

std::vector<TargetScore> score_targets(StepScorer& scorer, const std::vector<std::vector<int32_t>>& sources,
                                       const std::vector<std::vector<int32_t>>& targets, const SearchOptions& o,
                                       const SpecialIds& ids) {
  if (sources.size() != targets.size()) throw InternalError("score_targets: sources and targets differ in number");
  std::vector<TargetScore> out(sources.size());
  if (sources.empty()) return out;
  size_t longest = 0;
  for (const auto& t : targets) {
    if (t.size() + 1 > static_cast<size_t>(scorer.max_positions()))
      throw Error("a target of " + std::to_string(t.size()) + " pieces is longer than the model's " +
                  std::to_string(scorer.max_positions() - 1));
    longest = std::max(longest, t.size());
  }
  std::vector<int32_t> required{ids.eos};  // a shortlist keeps every target token
  for (const auto& t : targets) required.insert(required.end(), t.begin(), t.end());
  scorer.start(sources, static_cast<int>(sources.size()), static_cast<int>(longest) + 1, required);
  const std::vector<int32_t>* columns = scorer.columns();
  std::vector<size_t> active(sources.size());  // row r scores pair active[r]
  for (size_t i = 0; i < active.size(); ++i) active[i] = i;
  std::vector<int32_t> tokens(sources.size(), ids.bos), wanted, index;
  std::optional<tensor::Arena> arena;
  for (size_t t = 0; !active.empty(); ++t) {
    const tensor::Tensor log_probs = scorer.step(tokens, nullptr);
    if (!arena) arena.emplace(log_probs.backend());
    // The same float subtraction as the search's fused top-k, so the same bits.
    if (scorer.returns_logits()) ops::log_softmax(log_probs);
    const int64_t rows = log_probs.dim(0);
    wanted.clear();
    for (int64_t r = 0; r < rows; ++r) {
      const auto& target = targets[active[static_cast<size_t>(r)]];
      wanted.push_back(column_of(columns, t < target.size() ? target[t] : ids.eos));
    }
    tensor::ArenaScope scope(*arena);
    const std::vector<float> lp = ops::download_columns(log_probs, wanted, *arena);
    std::vector<size_t> still;
    index.clear();
    tokens.clear();
    for (int64_t r = 0; r < rows; ++r) {
      const size_t i = active[static_cast<size_t>(r)];
      TargetScore& s = out[i];
      s.log_prob = s.log_prob + lp[static_cast<size_t>(r)];
      s.token_log_probs.push_back(lp[static_cast<size_t>(r)]);
      if (t == targets[i].size()) {  // </s> scored: done
        s.score = normalized_score(o.length_penalty, o.alpha, s.log_prob, static_cast<int>(t) + 1);
        continue;
      }
      still.push_back(i);
      index.push_back(static_cast<int32_t>(r));
      tokens.push_back(targets[i][t]);
    }
    if (still.size() != active.size() && !still.empty()) scorer.reorder(index);
    active = std::move(still);
  }
  return out;
}

}  // namespace tt::decode
