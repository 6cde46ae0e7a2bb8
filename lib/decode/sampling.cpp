#include "decode/sampling.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "decode/length_penalty.h"
#include "util/rng.h"

namespace tt::decode::detail {
namespace {

// Nucleus sampling: keeps the fewest best candidates whose probabilities (after the temperature) reach
// the share p of the whole, in id order again.
void nucleus(std::vector<std::pair<int32_t, float>>& cands, float p, float temperature) {
  if (cands.empty()) return;
  std::stable_sort(cands.begin(), cands.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  const float top = cands.front().second;
  double total = 0;
  for (const auto& c : cands) total += std::exp((c.second - top) / temperature);
  double sum = 0;
  size_t keep = 0;
  while (keep < cands.size() && sum < p * total) sum += std::exp((cands[keep++].second - top) / temperature);
  cands.resize(std::max<size_t>(keep, 1));
  std::sort(cands.begin(), cands.end());  // back to id order: the draw walks the candidates in a fixed order
}

// The tokens row `row` may draw, with their log-probabilities, in a fixed order (best first for top-k,
// by id for the whole vocabulary). bos and pad never; </s> only from min_len on; only </s> at max_len.
void candidates(std::vector<std::pair<int32_t, float>>& out, const RowBest& rows, int row, bool eos_allowed,
                bool others_allowed, const SearchOptions& o, const SpecialIds& ids) {
  out.clear();
  auto usable = [](float v) { return std::isfinite(v); };
  if (!others_allowed) {
    const float v = rows.all.empty() ? rows.eos[static_cast<size_t>(row)]
                                     : rows.all[static_cast<size_t>(row) * rows.vocab + ids.eos];
    if (eos_allowed && usable(v)) out.emplace_back(ids.eos, v);
    return;
  }
  auto allowed = [&](int32_t t) {
    return t != ids.bos && t != ids.pad && (t != ids.eos || eos_allowed) && !(o.ban_unk && t == ids.unk) &&
           !rows.is_banned(row, t);
  };
  if (!rows.all.empty()) {
    const size_t V = static_cast<size_t>(rows.vocab);
    const float* lp = rows.all.data() + static_cast<size_t>(row) * V;
    for (size_t t = 0; t < V; ++t)
      if (allowed(static_cast<int32_t>(t)) && usable(lp[t])) out.emplace_back(static_cast<int32_t>(t), lp[t]);
    if (o.sampling_topp > 0) nucleus(out, o.sampling_topp, o.temperature);
    return;
  }
  const size_t first = static_cast<size_t>(row) * static_cast<size_t>(rows.width);
  for (size_t i = first; i < first + static_cast<size_t>(rows.width) && out.size() < static_cast<size_t>(o.sampling_topk); ++i)
    if (allowed(rows.tokens[i]) && usable(rows.values[i])) out.emplace_back(rows.tokens[i], rows.values[i]);
}

}  // namespace

bool sample_step(Sentence& s, const RowBest& rows, const std::vector<float>& attention, int S,
                 const SearchOptions& o, const SpecialIds& ids) {
  const int length = static_cast<int>(s.open.front().tokens.size());
  const bool eos_allowed = length >= std::min(o.min_len, s.max_len), others_allowed = length < s.max_len;
  std::vector<Open> drawing;
  if (length == s.prefix) {  // the one start hypothesis becomes the beam's samples, on one decoder row for now
    for (int k = 0; k < o.beam; ++k) {
      drawing.push_back(s.open.front());
      drawing.back().sample = k;
    }
  } else {
    drawing = std::move(s.open);
  }
  std::vector<Open> next;
  std::vector<std::pair<int32_t, float>> cands;
  for (Open& h : drawing) {
    candidates(cands, rows, h.row, eos_allowed, others_allowed, o, ids);
    if (cands.empty()) continue;  // nothing it may draw (the model gave every token -inf): dropped
    float top = cands.front().second;
    for (const auto& c : cands) top = std::max(top, c.second);
    double total = 0;
    for (const auto& c : cands) total += std::exp((c.second - top) / o.temperature);
    const uint64_t draw = static_cast<uint64_t>(length) * kMaxSamples + static_cast<uint64_t>(h.sample);
    const double u = util::philox_uniform(o.seed, s.stream, draw) * total;
    size_t pick = cands.size() - 1;  // (u < total: rounding could still leave it past the last)
    double sum = 0;
    for (size_t i = 0; i < cands.size(); ++i) {
      sum += std::exp((cands[i].second - top) / o.temperature);
      if (u < sum) {
        pick = i;
        break;
      }
    }
    const auto [token, lp] = cands[pick];
    std::vector<float> att = extend_attention(h, attention, S, s.source_size, o.attention);
    const float log_prob = h.log_prob + lp;
    if (token == ids.eos) {
      s.finished.push_back(Hypothesis{h.tokens, normalized_score(o.length_penalty, o.alpha, log_prob, length + 1),
                                      log_prob, std::move(att)});
    } else {
      Open n{h.tokens, log_prob, h.row, std::move(att), h.sample};
      n.tokens.push_back(token);
      next.push_back(std::move(n));
    }
  }
  s.open = std::move(next);
  return s.open.empty();
}

}  // namespace tt::decode::detail
