#include "decode/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "decode/sampling.h"
#include "decode/search_state.h"
#include "ops/copy.h"
#include "ops/cross_entropy.h"
#include "ops/decoding.h"
#include "ops/softmax.h"
#include "util/error.h"
#include "util/rng.h"

namespace tt::decode {

std::vector<float> detail::extend_attention(const Open& h, const std::vector<float>& attention, int S,
                                            int source_size, bool keep) {
  if (!keep) return {};
  std::vector<float> att = h.attention;
  const float* a = attention.data() + static_cast<size_t>(h.row) * S;
  att.insert(att.end(), a, a + source_size);
  return att;
}

namespace {

using detail::Open;
using detail::RowBest;
using detail::Sentence;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

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

// The highest score an open hypothesis of `length` tokens and summed log-probability `log_prob` (<= 0,
// only falling) could still get, finishing at some length in [length + 1, max_len + 1].
float best_reachable(const SearchOptions& o, float log_prob, int length, int max_len) {
  const float p = std::max(length_penalty(o.length_penalty, o.alpha, length + 1),
                           length_penalty(o.length_penalty, o.alpha, max_len + 1));
  return log_prob / p;
}

void sort_finished(std::vector<Hypothesis>& finished) {
  std::stable_sort(finished.begin(), finished.end(),
                   [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
}

// One step of one sentence: picks the k best continuations from its rows' best tokens; returns whether done.
bool advance(Sentence& s, const RowBest& best_of, const std::vector<float>& attention, int S, const SearchOptions& o,
             const SpecialIds& ids) {
  // Shrinking beam: one open hypothesis fewer for every finished one (beam 1 is greedy). Full beam: the
  // 2 * beam best candidates; those of the first beam that end in </s> finish, the first beam others go on.
  const int k = o.full_beam ? 2 * o.beam : o.beam - static_cast<int>(s.finished.size());
  const int length = static_cast<int>(s.open.front().tokens.size());
  const bool eos_allowed = length >= std::min(o.min_len, s.max_len), others_allowed = length < s.max_len;
  std::vector<Candidate> best;  // the k best so far, best first
  best.reserve(static_cast<size_t>(k) + 1);
  auto offer = [&](const Candidate& c) {
    if (c.step_log_prob == kNegInf || std::isnan(c.step_log_prob)) return;
    if (static_cast<int>(best.size()) == k && !c.better_than(best.back())) return;
    auto at = std::find_if(best.begin(), best.end(), [&](const Candidate& b) { return c.better_than(b); });
    best.insert(at, c);
    if (static_cast<int>(best.size()) > k) best.pop_back();
  };
  for (int j = 0; j < static_cast<int>(s.open.size()); ++j) {
    const Open& h = s.open[static_cast<size_t>(j)];
    if (eos_allowed) {
      const float lp = best_of.eos[static_cast<size_t>(h.row)];
      offer(Candidate{h.log_prob + lp, lp, j, ids.eos});
    }
    if (!others_allowed) continue;
    // At most 3 of the row's width (>= k + 3 + banned) best are bos, pad or eos, and at most `banned` more
    // are banned (<unk>, repeated n-grams): the rest hold its k best others.
    const size_t first = static_cast<size_t>(h.row) * static_cast<size_t>(best_of.width);
    for (size_t i = first; i < first + static_cast<size_t>(best_of.width); ++i) {
      const int32_t v = best_of.tokens[i];
      if (v == ids.bos || v == ids.pad || v == ids.eos) continue;  // never outputs / offered above
      if ((o.ban_unk && v == ids.unk) || best_of.is_banned(h.row, v)) continue;
      offer(Candidate{h.log_prob + best_of.values[i], best_of.values[i], j, v});
    }
  }
  std::vector<Open> next;
  for (size_t rank = 0; rank < best.size(); ++rank) {
    const Candidate& c = best[rank];
    if (o.full_beam && (c.token == ids.eos ? rank >= static_cast<size_t>(o.beam)
                                           : next.size() == static_cast<size_t>(o.beam)))
      continue;
    const Open& h = s.open[static_cast<size_t>(c.hyp)];
    std::vector<float> att = detail::extend_attention(h, attention, S, s.source_size, o.attention);
    if (c.token == ids.eos) {
      Hypothesis f{h.tokens, normalized_score(o.length_penalty, o.alpha, c.log_prob, length + 1), c.log_prob,
                   std::move(att)};
      s.finished.push_back(std::move(f));
    } else {
      Open n{h.tokens, c.log_prob, h.row, std::move(att)};
      n.tokens.push_back(c.token);
      next.push_back(std::move(n));
    }
  }
  s.open = std::move(next);
  if (s.open.empty()) return true;
  if (static_cast<int>(s.finished.size()) < o.nbest) return false;
  if (o.full_beam && static_cast<int>(s.finished.size()) >= o.beam) return true;
  sort_finished(s.finished);
  const float kept = s.finished[static_cast<size_t>(o.nbest - 1)].score;
  for (const Open& h : s.open)
    if (best_reachable(o, h.log_prob, length + 1, s.max_len) > kept) return false;
  return true;
}

// Reads back, for each row of scores [rows, V] (log-probabilities, or with `logits` the logits, normalised
// here fused with the top-k), its `width` best tokens and its </s> log-probability.
void read_best(RowBest& out, const tensor::Tensor& scores, bool logits, int width, int32_t eos_id,
               tensor::Arena& arena) {
  tensor::ArenaScope scope(arena);
  const int64_t rows = scores.dim(0), V = scores.dim(1);
  out.width = static_cast<int>(std::min<int64_t>(width, V));
  tensor::Tensor values = arena.allocate(tensor::Shape{rows, out.width});
  tensor::Tensor tokens = arena.allocate(tensor::Shape{rows, out.width}, tensor::DType::i32);
  tensor::Tensor shift;
  if (logits) {
    shift = arena.allocate(tensor::Shape{rows});
    ops::log_softmax_topk(values, tokens, shift, scores);
  } else {
    ops::topk(values, tokens, scores);
  }
  std::vector<int32_t> at(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) at[static_cast<size_t>(r)] = static_cast<int32_t>(r * V + eos_id);
  tensor::Tensor index = arena.allocate(tensor::Shape{rows}, tensor::DType::i32);
  ops::upload(index, at);
  tensor::Tensor eos = arena.allocate(tensor::Shape{rows, 1});
  ops::gather_rows(eos, scores.reshape(tensor::Shape{rows * V, 1}), index, rows, 1);
  out.values = values.to_host_f32();
  out.tokens = tokens.to_host_i32();
  out.eos = eos.to_host_f32();
  if (logits) {  // the same float subtraction as log_softmax's, so the same bits
    const std::vector<float> s = shift.to_host_f32();
    for (size_t r = 0; r < out.eos.size(); ++r) out.eos[r] -= s[r];
  }
}

}  // namespace

std::vector<int32_t> repeated_ngram_ends(const std::vector<int32_t>& tokens, int n) {
  std::vector<int32_t> ends;
  if (n < 1 || tokens.size() + 1 < static_cast<size_t>(n)) return ends;
  const size_t key = static_cast<size_t>(n) - 1, L = tokens.size();  // the last n - 1 tokens
  for (size_t i = 0; i + key < L; ++i)  // tokens[i, i + key) equal to the key, followed by tokens[i + key]
    if (std::equal(tokens.begin() + static_cast<std::ptrdiff_t>(i), tokens.begin() + static_cast<std::ptrdiff_t>(i + key),
                   tokens.end() - static_cast<std::ptrdiff_t>(key)))
      ends.push_back(tokens[i + key]);
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  return ends;
}

void validate(const SearchOptions& o) {
  if (o.beam < 1) throw ConfigError("beam size " + std::to_string(o.beam) + " must be at least 1");
  if (o.nbest < 1 || o.nbest > o.beam)
    throw ConfigError("nbest " + std::to_string(o.nbest) + " must be in [1, beam size " + std::to_string(o.beam) +
                      "]; raise the beam size");
  if (!(o.max_len_a >= 0) || o.max_len_b < 0)
    throw ConfigError("max length a*source+b needs a >= 0 and b >= 0 (got a = " + std::to_string(o.max_len_a) +
                      ", b = " + std::to_string(o.max_len_b) + ")");
  if (o.min_len < 0) throw ConfigError("min length " + std::to_string(o.min_len) + " must be >= 0");
  if (!std::isfinite(o.alpha)) throw ConfigError("length-penalty alpha must be a finite number");
  if (o.no_repeat_ngram < 0) throw ConfigError("no-repeat n-gram size " + std::to_string(o.no_repeat_ngram) + " must be >= 0");
  if (o.sampling_topp != 0 && (!(o.sampling_topp > 0) || o.sampling_topp > 1 || !o.sampling || o.sampling_topk != 0))
    throw ConfigError("nucleus sampling needs a share p in (0, 1] and no top-k");
  if (o.sampling) {
    if (o.full_beam) throw ConfigError("sampling draws each sample on its own: it has no full beam");
    if (o.sampling_topk < 0) throw ConfigError("sampling top-k " + std::to_string(o.sampling_topk) + " must be >= 0 (0: all)");
    if (!(o.temperature > 0) || !std::isfinite(o.temperature))
      throw ConfigError("temperature " + std::to_string(o.temperature) + " must be a positive number");
    if (o.beam > detail::kMaxSamples)
      throw ConfigError("at most " + std::to_string(detail::kMaxSamples) + " samples per sentence (the beam)");
  }
}

std::vector<std::vector<Hypothesis>> search(StepScorer& scorer, const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& o, const SpecialIds& ids,
                                            const std::vector<uint64_t>& streams) {
  validate(o);
  if (!streams.empty() && streams.size() != sources.size())
    throw Error("search: " + std::to_string(streams.size()) + " random streams for " +
                std::to_string(sources.size()) + " sources");
  const int32_t bos_id = ids.bos, eos_id = ids.eos;
  std::vector<std::vector<Hypothesis>> results(sources.size());
  std::vector<Sentence> active;
  std::vector<std::vector<int32_t>> batch;
  for (size_t i = 0; i < sources.size(); ++i) {
    const auto& src = sources[i];
    if (src.empty() || (src.size() == 1 && src[0] == eos_id)) {
      Hypothesis empty;
      if (o.attention) empty.attention.assign(src.size(), src.empty() ? 0.0f : 1.0f);
      results[i].push_back(std::move(empty));
      continue;
    }
    Sentence s;
    s.index = i;
    s.stream = util::rng_stream(util::RngPurpose::decoding, streams.empty() ? i : streams[i], 0);
    s.source_size = static_cast<int>(src.size());
    const int words = s.source_size - (src.back() == eos_id ? 1 : 0);
    const double limit = std::floor(double{o.max_len_a} * words + o.max_len_b);
    s.max_len = static_cast<int>(std::clamp(limit, 0.0, double(scorer.max_positions() - 1)));
    s.open.push_back(Open{{}, 0.0f, static_cast<int>(active.size()), {}});
    active.push_back(std::move(s));
    batch.push_back(src);
  }
  if (active.empty()) return results;
  int max_steps = 0, S = 0;
  for (const Sentence& s : active) {
    max_steps = std::max(max_steps, s.max_len + 1);
    S = std::max(S, s.source_size);
  }
  scorer.start(batch, static_cast<int>(active.size()) * o.beam, max_steps);
  std::vector<int32_t> tokens(active.size(), bos_id), index;
  std::vector<float> attention;
  std::optional<tensor::Arena> arena;  // top-k scratch, on the scorer's device
  RowBest best_of;
  while (!active.empty()) {
    const int rows = static_cast<int>(tokens.size());
    const tensor::Tensor log_probs = scorer.step(tokens, o.attention ? &attention : nullptr);
    if (!arena) arena.emplace(log_probs.backend());
    int banned = o.ban_unk ? 1 : 0;  // the most candidates of one row that may be passed over
    if (o.no_repeat_ngram > 0) {
      best_of.banned.assign(static_cast<size_t>(rows), {});
      size_t most = 0;
      for (const Sentence& s : active)
        for (const Open& h : s.open) {
          auto& b = best_of.banned[static_cast<size_t>(h.row)];
          b = repeated_ngram_ends(h.tokens, o.no_repeat_ngram);
          most = std::max(most, b.size());
        }
      banned += static_cast<int>(most);
    }
    if (o.sampling && o.sampling_topk == 0) {  // the whole distribution, on the host
      if (scorer.returns_logits()) ops::log_softmax(log_probs);
      best_of.all = log_probs.to_host_f32();
      best_of.vocab = static_cast<int>(log_probs.dim(1));
    } else {
      read_best(best_of, log_probs, scorer.returns_logits(), (o.sampling ? o.sampling_topk : o.beam) + 3 + banned,
                eos_id, *arena);
    }
    std::vector<Sentence> still;
    index.clear();
    tokens.clear();
    for (Sentence& s : active) {
      if (o.sampling ? detail::sample_step(s, best_of, attention, S, o, ids) : advance(s, best_of, attention, S, o, ids)) {
        sort_finished(s.finished);
        s.finished.resize(std::min(s.finished.size(), static_cast<size_t>(o.nbest)));
        // Every continuation was non-finite (weights that overflow): an empty line, scored -inf, for the
        // translator to warn about; the output keeps a line for every line in.
        if (s.finished.empty())
          s.finished.push_back(Hypothesis{{}, kNegInf, kNegInf,
                                          std::vector<float>(o.attention ? static_cast<size_t>(s.source_size) : 0, 0.0f)});
        results[s.index] = std::move(s.finished);
        continue;
      }
      for (Open& h : s.open) {
        index.push_back(h.row);
        h.row = static_cast<int>(index.size()) - 1;
        tokens.push_back(h.tokens.back());
      }
      still.push_back(std::move(s));
    }
    active = std::move(still);
    if (active.empty()) break;
    bool identity = static_cast<int>(index.size()) == rows;
    for (size_t r = 0; identity && r < index.size(); ++r) identity = index[r] == static_cast<int32_t>(r);
    if (!identity) scorer.reorder(index);
  }
  return results;
}

std::vector<std::vector<Hypothesis>> search(nn::Transformer& model, const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& options) {
  ModelScorer scorer(model, true);  // logits: normalised inside the top-k, as an ensemble of one does
  return search(scorer, sources, options, special_ids(model.config()));
}

std::vector<std::vector<Hypothesis>> search(const std::vector<nn::Transformer*>& models,
                                            const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& options) {
  EnsembleScorer scorer(models);
  return search(scorer, sources, options, special_ids(models.front()->config()));
}

}  // namespace tt::decode
