#include "decode/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string>

#include "decode/constraints.h"
#include "decode/repetition_penalty.h"
#include "decode/sampling.h"
#include "decode/search_state.h"
#include "decode/shortlist.h"
#include "ops/copy.h"
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

// The highest score an open hypothesis of `length` tokens and summed log-probability `log_prob` (<= 0,
// only falling) could still get, finishing at some length in [length + 1, max_len + 1].
float best_reachable(const SearchOptions& o, float log_prob, int length, int max_len) {
  const float p = std::max(length_penalty(o.length_penalty, o.alpha, length + 1),
                           length_penalty(o.length_penalty, o.alpha, max_len + 1));
  return log_prob / p;
}

}  // namespace

bool detail::take(Sentence& s, const std::vector<Candidate>& best, const std::vector<float>& attention, int S,
                  const SearchOptions& o, const SpecialIds& ids) {
  const int length = static_cast<int>(s.open.front().tokens.size());
  std::vector<Open> next;
  for (size_t rank = 0; rank < best.size(); ++rank) {
    const Candidate& c = best[rank];
    if (o.full_beam && (c.token == ids.eos ? rank >= static_cast<size_t>(o.beam)
                                           : next.size() == static_cast<size_t>(o.beam)))
      continue;
    const Open& h = s.open[static_cast<size_t>(c.hyp)];
    std::vector<float> att = extend_attention(h, attention, S, s.source_size, o.attention);
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

void detail::sort_finished(std::vector<Hypothesis>& finished) {
  std::stable_sort(finished.begin(), finished.end(),
                   [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
}

namespace {

using detail::Candidate;
using detail::Open;
using detail::RowBest;
using detail::Sentence;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

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
  return detail::take(s, best, attention, S, o, ids);
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
  out.eos = ops::download_columns(scores, std::vector<int32_t>(static_cast<size_t>(rows), eos_id), arena);
  out.values = values.to_host_f32();
  out.tokens = tokens.to_host_i32();
  out.shift.clear();
  if (logits) {  // the same float subtraction as log_softmax's, so the same bits
    out.shift = shift.to_host_f32();
    for (size_t r = 0; r < out.eos.size(); ++r) out.eos[r] -= out.shift[r];
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
  if (!(o.repetition_penalty > 0) || !std::isfinite(o.repetition_penalty))
    throw ConfigError("repetition penalty " + std::to_string(o.repetition_penalty) + " must be a positive number (1: off)");
  if (o.alternatives < 0) throw ConfigError("alternatives " + std::to_string(o.alternatives) + " must be >= 0");
  if (o.alternatives > 0 && (o.nbest != 1 || o.sampling))
    throw ConfigError("alternatives give one completed hypothesis each: they take no n-best list and no sampling");
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

namespace {

// A shortlist's [rows, columns] log-probabilities as [rows, V], -inf where it left an id out (sampling
// from the whole distribution reads them by id).
void widen(RowBest& best_of, const std::vector<int32_t>& columns, int V) {
  const size_t C = columns.size(), rows = best_of.all.size() / C;
  std::vector<float> all(rows * static_cast<size_t>(V), kNegInf);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < C; ++c) all[r * static_cast<size_t>(V) + static_cast<size_t>(columns[c])] = best_of.all[r * C + c];
  best_of.all = std::move(all);
  best_of.vocab = V;
}

// SearchOptions::alternatives: a sentence at its first free position becomes one sentence per alternative,
// each starting with one of the row's best tokens other than </s> (best first); none when nothing may
// follow (max length) — the sentence then goes on as it is.
std::vector<Sentence> expand_alternatives(const Sentence& s, const RowBest& best_of, const std::vector<float>& attention,
                                          int S, const SearchOptions& o, const SpecialIds& ids) {
  std::vector<Sentence> out;
  const Open& h = s.open.front();
  if (static_cast<int>(h.tokens.size()) >= s.max_len) return out;
  const size_t first = static_cast<size_t>(h.row) * static_cast<size_t>(best_of.width);
  for (size_t i = first; i < first + static_cast<size_t>(best_of.width) && static_cast<int>(out.size()) < o.alternatives; ++i) {
    const int32_t v = best_of.tokens[i];
    const float lp = best_of.values[i];
    if (v == ids.bos || v == ids.pad || v == ids.eos || (o.ban_unk && v == ids.unk) || best_of.is_banned(h.row, v)) continue;
    if (lp == kNegInf || std::isnan(lp)) continue;
    Sentence a{s.index, s.stream, s.source_size, s.max_len, s.prefix, static_cast<int>(out.size()), {}, {}, s.constraints};
    Open n{h.tokens, h.log_prob + lp, h.row, detail::extend_attention(h, attention, S, s.source_size, o.attention)};
    n.tokens.push_back(v);
    a.open.push_back(std::move(n));
    out.push_back(std::move(a));
  }
  return out;
}

// Per row, the tokens that would advance its sentence's constraints and their log-probabilities (logits:
// minus the row's log-softmax shift, the search's own subtraction).
void read_required(RowBest& best_of, const std::vector<Sentence>& active, const tensor::Tensor& scores, int rows,
                   const std::vector<int32_t>* columns, tensor::Arena& arena) {
  best_of.required.assign(static_cast<size_t>(rows), {});
  std::vector<int64_t> at;
  const int64_t V = scores.dim(1);
  for (const Sentence& s : active) {
    if (!s.constraints) continue;
    for (const Open& h : s.open)
      for (int32_t t : s.constraints->state(h.tokens).next) {
        best_of.required[static_cast<size_t>(h.row)].emplace_back(t, 0.0f);
        at.push_back(int64_t{h.row} * V + column_of(columns, t));  // (required at start(): never -1)
      }
  }
  if (at.empty()) return;
  tensor::ArenaScope scope(arena);
  const std::vector<float> values = ops::download_at(scores, at, arena);
  size_t k = 0;
  for (size_t r = 0; r < best_of.required.size(); ++r)
    for (auto& [token, lp] : best_of.required[r]) {
      lp = values[k++];
      if (!best_of.shift.empty()) lp = lp - best_of.shift[r];
    }
}

// The search of sentences that share their prefix length (the first step feeds the prefixes at once).
void search_group(StepScorer& scorer, const std::vector<std::vector<int32_t>>& sources, const std::vector<size_t>& members,
                  const SearchOptions& o, const SpecialIds& ids, const SearchInputs& inputs,
                  std::vector<std::vector<Hypothesis>>& results) {
  const int32_t bos_id = ids.bos, eos_id = ids.eos;
  const auto& streams = inputs.streams;
  std::vector<Sentence> active;
  std::vector<std::vector<int32_t>> batch, forced;
  bool constrained = false;
  // What a shortlist must keep: </s>, <unk> (so that ban_unk and its absence mean the same), the prefixes
  // and the constraints' tokens.
  std::vector<int32_t> required{eos_id, ids.unk};
  for (size_t i : members) {
    const auto& src = sources[i];
    const std::vector<int32_t> none;
    const auto& prefix = inputs.prefixes.empty() ? none : inputs.prefixes[i];
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
    s.prefix = static_cast<int>(prefix.size());
    if (s.prefix + 1 >= scorer.max_positions())
      throw Error("search: a target prefix of " + std::to_string(s.prefix) + " pieces leaves no room in the model's " +
                  std::to_string(scorer.max_positions()) + " positions");
    const int words = s.source_size - (src.back() == eos_id ? 1 : 0);
    s.max_len = max_target_length(o, words, s.prefix, scorer.max_positions());
    if (!inputs.constraints.empty()) {
      Constraints phrases = inputs.constraints[i];
      fit_constraints(phrases, prefix, s.max_len);
      for (const auto& phrase : phrases) required.insert(required.end(), phrase.begin(), phrase.end());
      if (!phrases.empty()) s.constraints = std::make_shared<const detail::ConstraintTracker>(phrases);
      constrained = constrained || s.constraints;
    }
    s.open.push_back(Open{prefix, 0.0f, static_cast<int>(active.size()), {}});
    active.push_back(std::move(s));
    batch.push_back(src);
    required.insert(required.end(), prefix.begin(), prefix.end());
    if (!prefix.empty()) {
      forced.push_back({bos_id});
      forced.back().insert(forced.back().end(), prefix.begin(), prefix.end());
    }
  }
  if (active.empty()) return;
  int max_steps = 0, S = 0;
  for (const Sentence& s : active) {
    max_steps = std::max(max_steps, s.max_len + 1);
    S = std::max(S, s.source_size);
  }
  scorer.start(batch, static_cast<int>(active.size()) * o.beam * std::max(1, o.alternatives), max_steps, required);
  const std::vector<int32_t>* columns = scorer.columns();
  std::vector<int32_t> tokens(active.size(), bos_id), index;
  std::vector<float> attention;
  std::optional<tensor::Arena> arena;  // top-k scratch, on the scorer's device
  RowBest best_of;
  for (bool first = true; !active.empty(); first = false) {
    const int rows = static_cast<int>(tokens.size());
    tensor::Tensor log_probs;
    if (first && !forced.empty()) {  // the prefixes in one pass; their log-probabilities start the scores
      std::vector<std::vector<float>> forced_log_probs;
      std::vector<float> forced_attention;  // [rows, prefix + 1, S]
      log_probs = scorer.force(forced, forced_log_probs, o.attention ? &forced_attention : nullptr);
      const size_t n = forced.front().size();
      if (o.attention) attention.assign(static_cast<size_t>(rows) * S, 0.0f);
      for (Sentence& s : active) {
        Open& h = s.open.front();
        for (float lp : forced_log_probs[static_cast<size_t>(h.row)]) h.log_prob = h.log_prob + lp;
        if (!o.attention) continue;
        const float* a = forced_attention.data() + static_cast<size_t>(h.row) * n * S;
        for (size_t t = 0; t + 1 < n; ++t)
          h.attention.insert(h.attention.end(), a + t * S, a + t * S + s.source_size);
        std::copy_n(a + (n - 1) * S, S, attention.begin() + static_cast<std::ptrdiff_t>(h.row) * S);
      }
    } else {
      log_probs = scorer.step(tokens, o.attention ? &attention : nullptr);
    }
    if (!arena) arena.emplace(log_probs.backend());
    if (o.repetition_penalty != 1.0f) {
      std::vector<std::vector<int32_t>> seen(static_cast<size_t>(rows));
      for (const Sentence& s : active)
        for (const Open& h : s.open) seen[static_cast<size_t>(h.row)] = h.tokens;
      if (columns)
        for (auto& held : seen)
          for (int32_t& t : held) t = column_of(columns, t);  // (every token held came from the columns)
      penalize_repeats(log_probs, seen, o.repetition_penalty, scorer.returns_logits());
    }
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
      if (columns) widen(best_of, *columns, scorer.vocab_size());
    } else {
      const int wanted = o.sampling ? o.sampling_topk : std::max(o.beam, first ? o.alternatives : 0);
      read_best(best_of, log_probs, scorer.returns_logits(), wanted + 3 + banned, column_of(columns, eos_id), *arena);
      if (columns)
        for (int32_t& t : best_of.tokens) t = (*columns)[static_cast<size_t>(t)];
    }
    if (constrained) read_required(best_of, active, log_probs, rows, columns, *arena);
    std::vector<Sentence> still;
    index.clear();
    tokens.clear();
    auto keep = [&](Sentence&& s) {
      for (Open& h : s.open) {
        index.push_back(h.row);
        h.row = static_cast<int>(index.size()) - 1;
        tokens.push_back(h.tokens.back());
      }
      still.push_back(std::move(s));
    };
    for (Sentence& s : active) {
      if (first && o.alternatives > 0) {
        std::vector<Sentence> alternatives = expand_alternatives(s, best_of, attention, S, o, ids);
        if (!alternatives.empty()) {
          results[s.index].resize(alternatives.size());
          for (Sentence& a : alternatives) keep(std::move(a));
          continue;
        }
      }
      const bool done = o.sampling       ? detail::sample_step(s, best_of, attention, S, o, ids)
                        : s.constraints ? detail::take(s, choose_constrained(s, best_of, o, ids), attention, S, o, ids)
                                        : advance(s, best_of, attention, S, o, ids);
      if (done) {
        detail::sort_finished(s.finished);
        s.finished.resize(std::min(s.finished.size(), static_cast<size_t>(o.nbest)));
        // Every continuation was non-finite (weights that overflow): an empty line, scored -inf, for the
        // translator to warn about; the output keeps a line for every line in.
        if (s.finished.empty())
          s.finished.push_back(Hypothesis{{}, kNegInf, kNegInf,
                                          std::vector<float>(o.attention ? static_cast<size_t>(s.source_size) : 0, 0.0f)});
        if (s.alternative >= 0)
          results[s.index][static_cast<size_t>(s.alternative)] = std::move(s.finished.front());
        else
          results[s.index] = std::move(s.finished);
        continue;
      }
      keep(std::move(s));
    }
    active = std::move(still);
    if (active.empty()) break;
    bool identity = static_cast<int>(index.size()) == rows;
    for (size_t r = 0; identity && r < index.size(); ++r) identity = index[r] == static_cast<int32_t>(r);
    if (!identity) scorer.reorder(index);
  }
}

}  // namespace

int max_target_length(const SearchOptions& o, int words, int prefix, int max_positions) {
  const double limit = std::floor(double{o.max_len_a} * words + o.max_len_b) + prefix;
  return static_cast<int>(std::clamp(limit, 0.0, double(max_positions - 1)));
}

std::vector<std::vector<Hypothesis>> search(StepScorer& scorer, const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& o, const SpecialIds& ids, const SearchInputs& inputs) {
  validate(o);
  auto check = [&](size_t n, const char* what) {
    if (n != 0 && n != sources.size())
      throw Error("search: " + std::to_string(n) + " " + what + " for " + std::to_string(sources.size()) + " sources");
  };
  check(inputs.streams.size(), "random streams");
  check(inputs.prefixes.size(), "prefixes");
  check(inputs.constraints.size(), "constraint lists");
  if (!inputs.constraints.empty()) check_constraint_options(o);
  const auto& prefixes = inputs.prefixes;
  std::vector<std::vector<Hypothesis>> results(sources.size());
  // Sentences whose prefixes differ in length are searched apart, shortest first (each row's bits do not
  // depend on the others, so the grouping changes no output).
  std::vector<size_t> order(sources.size());
  std::iota(order.begin(), order.end(), size_t{0});
  auto length = [&](size_t i) { return prefixes.empty() ? size_t{0} : prefixes[i].size(); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return length(a) < length(b); });
  for (size_t i = 0; i < order.size();) {
    size_t j = i + 1;
    while (j < order.size() && length(order[j]) == length(order[i])) ++j;
    search_group(scorer, sources, std::vector<size_t>(order.begin() + static_cast<std::ptrdiff_t>(i),
                                                      order.begin() + static_cast<std::ptrdiff_t>(j)),
                 o, ids, inputs, results);
    i = j;
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
