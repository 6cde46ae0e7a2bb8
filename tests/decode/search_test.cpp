// Beam search: length penalties on worked numbers, a hand-written scorer whose best sequence is known
// (beam finds it, greedy does not), n-best order, length limits, batching, errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <algorithm>
#include <map>
#include <set>

#include "backend/backend.h"
#include "decode/constraints.h"
#include "decode/search.h"
#include "util/error.h"

using namespace tt;
using decode::Hypothesis;
using decode::LengthPenalty;
using decode::SearchOptions;

TEST_CASE("length penalties on worked numbers", "[decode][search]") {
  CHECK(decode::length_penalty(LengthPenalty::gnmt, 0.6f, 10) == Approx(1.7328621));  // (15/6)^0.6
  CHECK(decode::length_penalty(LengthPenalty::gnmt, 0.6f, 1) == Approx(1.0));          // (6/6)^0.6
  CHECK(decode::length_penalty(LengthPenalty::gnmt, 1.0f, 7) == Approx(2.0));          // 12/6
  CHECK(decode::length_penalty(LengthPenalty::power, 0.6f, 10) == Approx(3.9810717));  // 10^0.6
  CHECK(decode::length_penalty(LengthPenalty::power, 1.0f, 4) == Approx(4.0));
  CHECK(decode::length_penalty(LengthPenalty::none, 0.6f, 10) == 1.0f);
  CHECK(decode::normalized_score(LengthPenalty::power, 1.0f, -6.0f, 3) == Approx(-2.0));
  CHECK(decode::parse_length_penalty("power") == LengthPenalty::power);
  CHECK_THROWS_WITH(decode::parse_length_penalty("wu"), Catch::Contains("none, gnmt or power"));
}

namespace {

// Vocabulary: 0 pad, 1 unk, 2 bos, 3 eos, 4 A, 5 B. For source {4, eos}:
//   after bos:  A 0.6, B 0.4        after A: eos, A, B 1/3 each      after B: eos 1
//   after two tokens: eos 1
// Greedy takes A (0.6) then eos (1/3, ties go to the lower id): "A", p = 0.2. The best sequence is "B"
// (p = 0.4). Source {5, eos} swaps the roles of A and B.
class ToyScorer final : public decode::StepScorer {
 public:
  int steps = 0;
  std::vector<int> rows_per_step;
  int nan_from_step = 0;  // > 0: every score of that step and later is NaN (a damaged model)
  int vocab_size() const override { return 6; }
  int max_positions() const override { return 50; }
  void start(const std::vector<std::vector<int32_t>>& sources, int, int, const std::vector<int32_t>&) override {
    rows_.clear();
    for (const auto& s : sources) rows_.push_back({s[0] == 5, {}});
  }
  tensor::Tensor step(const std::vector<int32_t>& tokens, std::vector<float>* attention) override {
    REQUIRE(tokens.size() == rows_.size());
    ++steps;
    rows_per_step.push_back(static_cast<int>(tokens.size()));
    std::vector<float> lp(tokens.size() * 6, -30.0f);
    for (size_t r = 0; r < tokens.size(); ++r) {
      Row& row = rows_[r];
      if (tokens[r] != 2) row.history.push_back(swap(row, tokens[r]));
      float* p = &lp[r * 6];
      const auto& h = row.history;
      if (h.empty()) {
        p[swap(row, 4)] = std::log(0.6f);
        p[swap(row, 5)] = std::log(0.4f);
      } else if (h.size() == 1 && h[0] == 4) {
        p[3] = p[4] = p[5] = std::log(1.0f / 3.0f);
      } else {
        p[3] = 0.0f;
      }
    }
    if (nan_from_step > 0 && steps >= nan_from_step) lp.assign(lp.size(), std::nanf(""));
    if (attention) attention->assign(tokens.size() * 2, 0.5f);
    return tensor::Tensor::from_host(*backend_, tensor::Shape{static_cast<int64_t>(tokens.size()), 6}, lp);
  }
  void reorder(const std::vector<int32_t>& index) override {
    std::vector<Row> next;
    for (int32_t i : index) next.push_back(rows_[static_cast<size_t>(i)]);
    rows_ = next;
  }

 private:
  struct Row {
    bool swapped;
    std::vector<int32_t> history;  // in the unswapped alphabet
  };
  static int32_t swap(const Row& r, int32_t t) { return r.swapped && (t == 4 || t == 5) ? 9 - t : t; }
  std::vector<Row> rows_;
  std::unique_ptr<backend::Backend> backend_ = backend::make_backend("cpu", 1);
};

SearchOptions toy_options(int beam, int nbest = 1) {
  SearchOptions o;
  o.beam = beam;
  o.nbest = nbest;
  o.length_penalty = LengthPenalty::none;
  return o;
}

}  // namespace

TEST_CASE("beam search finds the best sequence that greedy misses", "[decode][search]") {
  ToyScorer toy;
  auto greedy = decode::search(toy, {{4, 3}}, toy_options(1));
  REQUIRE(greedy[0].size() == 1);
  CHECK(greedy[0][0].tokens == std::vector<int32_t>{4});
  CHECK(greedy[0][0].log_prob == Approx(std::log(0.2)));
  auto beam = decode::search(toy, {{4, 3}}, toy_options(2));
  CHECK(beam[0][0].tokens == std::vector<int32_t>{5});
  CHECK(beam[0][0].log_prob == Approx(std::log(0.4)));
  CHECK(beam[0][0].score == beam[0][0].log_prob);  // no length penalty
}

TEST_CASE("n-best lists come best first with their scores", "[decode][search]") {
  ToyScorer toy;
  auto r = decode::search(toy, {{4, 3}}, toy_options(3, 3));
  REQUIRE(r[0].size() == 3);
  CHECK(r[0][0].tokens == std::vector<int32_t>{5});     // 0.4
  CHECK(r[0][1].tokens == std::vector<int32_t>{4});     // 0.6 * 1/3 = 0.2
  CHECK(r[0][2].tokens == std::vector<int32_t>{4, 4});  // 0.2, after "A" by the tie rule (longer, same p)
  CHECK(r[0][1].log_prob == Approx(std::log(0.2)));
  CHECK(r[0][2].log_prob == Approx(std::log(0.2)));
  for (size_t i = 1; i < r[0].size(); ++i) CHECK(r[0][i - 1].score >= r[0][i].score);
  // A length penalty reranks: power alpha 1 divides by L (with </s>): "B" -0.916/2, "A A" -1.609/3 = -0.536,
  // "A" -1.609/2 = -0.805
  SearchOptions o = toy_options(3, 3);
  o.length_penalty = LengthPenalty::power;
  o.alpha = 1.0f;
  r = decode::search(toy, {{4, 3}}, o);
  REQUIRE(r[0].size() == 3);
  CHECK(r[0][0].tokens == std::vector<int32_t>{5});
  CHECK(r[0][1].tokens == std::vector<int32_t>{4, 4});
  CHECK(r[0][1].score == Approx(std::log(0.2) / 3));
  CHECK(r[0][2].tokens == std::vector<int32_t>{4});
}

TEST_CASE("a full beam keeps beam open hypotheses where a shrinking one drops finished ones", "[decode][search]") {
  // Beam 3 on "A" (4): after bos the open hypotheses are A, B and unk; at step 2, "B </s>" and "A </s>"
  // finish. Shrinking leaves one open hypothesis (A A); the full beam keeps three (A A, A B, A unk).
  ToyScorer shrink_toy, full_toy;
  auto shrink = decode::search(shrink_toy, {{4, 3}}, toy_options(3, 3));
  SearchOptions full_options = toy_options(3, 3);
  full_options.full_beam = true;
  auto full = decode::search(full_toy, {{4, 3}}, full_options);
  CHECK(shrink_toy.rows_per_step == std::vector<int>{1, 3, 1});
  CHECK(full_toy.rows_per_step == std::vector<int>{1, 3, 3});
  REQUIRE(full[0].size() == 3);
  CHECK(full[0][0].tokens == std::vector<int32_t>{5});
  CHECK(full[0][1].tokens == std::vector<int32_t>{4});
  CHECK(full[0][2].tokens == std::vector<int32_t>{4, 4});  // A B ties with it and loses on the token id
  // Greedy is greedy either way.
  full_options.beam = 1;
  full_options.nbest = 1;
  CHECK(decode::search(full_toy, {{4, 3}}, full_options)[0][0].tokens == std::vector<int32_t>{4});
}

TEST_CASE("sentences in one batch are searched independently and finished ones leave it", "[decode][search]") {
  ToyScorer toy;
  auto together = decode::search(toy, {{4, 3}, {3}, {5, 3}, {}}, toy_options(2));
  REQUIRE(together.size() == 4);
  CHECK(together[0][0].tokens == std::vector<int32_t>{5});
  CHECK(together[2][0].tokens == std::vector<int32_t>{4});  // the swapped sentence
  CHECK(together[1].size() == 1);                           // empty sources: one empty hypothesis
  CHECK(together[1][0].tokens.empty());
  CHECK(together[3][0].tokens.empty());
  CHECK(toy.rows_per_step.front() == 2);  // the empty sources never reach the scorer
  auto alone = decode::search(toy, {{5, 3}}, toy_options(2));
  CHECK(alone[0][0].tokens == together[2][0].tokens);
  CHECK(alone[0][0].score == together[2][0].score);
}

TEST_CASE("max and min length", "[decode][search]") {
  ToyScorer toy;
  SearchOptions o = toy_options(3, 3);
  o.max_len_a = 0.0f;
  o.max_len_b = 1;
  auto r = decode::search(toy, {{4, 3}}, o);
  for (const auto& h : r[0]) CHECK(h.tokens.size() <= 1);
  o = toy_options(2);
  o.min_len = 2;  // "B" then forced past eos: after B only eos is likely, so B B (p 0.4 * e^-30) loses to A A
  r = decode::search(toy, {{4, 3}}, o);
  CHECK(r[0][0].tokens.size() >= 2);
  CHECK(r[0][0].tokens == std::vector<int32_t>{4, 4});
}

TEST_CASE("search options out of range are errors naming the option", "[decode][search]") {
  ToyScorer toy;
  SearchOptions o;
  o.beam = 0;
  CHECK_THROWS_WITH(decode::search(toy, {{4, 3}}, o), Catch::Contains("beam size 0"));
  o.beam = 2;
  o.nbest = 3;
  CHECK_THROWS_WITH(decode::search(toy, {{4, 3}}, o), Catch::Contains("nbest 3"));
  o.nbest = 1;
  o.max_len_b = -1;
  CHECK_THROWS_WITH(decode::search(toy, {{4, 3}}, o), Catch::Contains("b >= 0"));
}

TEST_CASE("scores that are all NaN end the line with an empty hypothesis of score -inf, never a crash",
          "[decode][search]") {
  for (const int from_step : {1, 2}) {
    for (const int beam : {1, 2, 4}) {
      for (const bool sampling : {false, true}) {
        ToyScorer toy;
        toy.nan_from_step = from_step;
        SearchOptions o;
        o.beam = beam;
        o.nbest = beam;
        o.sampling = sampling;
        o.attention = true;
        CAPTURE(from_step, beam, sampling);
        const auto r = decode::search(toy, {{4, 3}, {5, 3}}, o);
        REQUIRE(r.size() == 2);
        for (const auto& hyps : r) {
          REQUIRE_FALSE(hyps.empty());
          // A beam of 4 (its 4 best include </s>) can end a hypothesis in </s> (log-probability -30) before the NaN step.
          if (from_step == 2 && beam == 4 && !sampling) {
            CHECK(hyps[0].score == Approx(-30.0f / decode::length_penalty(o.length_penalty, o.alpha, 1)));
            continue;
          }
          REQUIRE(hyps.size() == 1);
          CHECK(hyps[0].tokens.empty());
          CHECK(hyps[0].score == -std::numeric_limits<float>::infinity());
          CHECK(hyps[0].log_prob == -std::numeric_limits<float>::infinity());
          CHECK(hyps[0].attention.size() == 2);  // one row (</s>) over the 2 source ids
        }
      }
    }
  }
}

namespace {

// Every step the same: <unk> 0.5, A 0.3, B 0.15, </s> 0.05 (the rest nothing): a model that babbles.
class BabbleScorer final : public decode::StepScorer {
 public:
  int vocab_size() const override { return 6; }
  int max_positions() const override { return 50; }
  void start(const std::vector<std::vector<int32_t>>&, int, int, const std::vector<int32_t>&) override {}
  tensor::Tensor step(const std::vector<int32_t>& tokens, std::vector<float>*) override {
    std::vector<float> lp(tokens.size() * 6, -std::numeric_limits<float>::infinity());
    for (size_t r = 0; r < tokens.size(); ++r) {
      lp[r * 6 + 1] = std::log(0.5f);
      lp[r * 6 + 4] = std::log(0.3f);
      lp[r * 6 + 5] = std::log(0.15f);
      lp[r * 6 + 3] = std::log(0.05f);
    }
    return tensor::Tensor::from_host(*backend_, tensor::Shape{static_cast<int64_t>(tokens.size()), 6}, lp);
  }
  void reorder(const std::vector<int32_t>&) override {}

 private:
  std::unique_ptr<backend::Backend> backend_ = backend::make_backend("cpu", 1);
};

std::vector<int32_t> best_tokens(decode::StepScorer& scorer, const SearchOptions& o) {
  const auto results = decode::search(scorer, {{4, 3}}, o);
  REQUIRE(results.size() == 1);
  REQUIRE_FALSE(results[0].empty());
  return results[0][0].tokens;
}

// No token twice in a row of bigrams: no bigram appears twice in `t`.
bool bigrams_unique(const std::vector<int32_t>& t) {
  for (size_t i = 0; i + 1 < t.size(); ++i)
    for (size_t j = i + 1; j + 1 < t.size(); ++j)
      if (t[i] == t[j] && t[i + 1] == t[j + 1]) return false;
  return true;
}

}  // namespace

TEST_CASE("repeated_ngram_ends: the tokens that would repeat an n-gram", "[decode][search]") {
  using V = std::vector<int32_t>;
  CHECK(decode::repeated_ngram_ends({7, 8, 7}, 2) == V{8});         // "7 8" seen: 8 may not follow 7 again
  CHECK(decode::repeated_ngram_ends({7, 8, 7, 9, 7}, 2) == V{8, 9});
  CHECK(decode::repeated_ngram_ends({7, 8, 9, 7, 8}, 3) == V{9});
  CHECK(decode::repeated_ngram_ends({9, 7, 9}, 1) == V{7, 9});       // n = 1: no token twice
  CHECK(decode::repeated_ngram_ends({7, 8}, 4).empty());
  CHECK(decode::repeated_ngram_ends({7, 8, 7}, 0).empty());
}

TEST_CASE("ban_unk and no_repeat_ngram change a babbling model's output exactly as defined", "[decode][search]") {
  BabbleScorer babble;
  SearchOptions o = toy_options(1);  // greedy: each step's best allowed token
  o.max_len_a = 0;
  o.max_len_b = 4;
  CHECK(best_tokens(babble, o) == std::vector<int32_t>{1, 1, 1, 1});  // off: <unk> every time
  o.ban_unk = true;
  CHECK(best_tokens(babble, o) == std::vector<int32_t>{4, 4, 4, 4});
  o.no_repeat_ngram = 2;  // A A, then not A again after A: B, then A after B is new
  CHECK(best_tokens(babble, o) == std::vector<int32_t>{4, 4, 5, 4});
  o.no_repeat_ngram = 1;  // A, B, then only </s> is left
  CHECK(best_tokens(babble, o) == std::vector<int32_t>{4, 5});
  o.ban_unk = false;
  o.no_repeat_ngram = 3;  // the 4th <unk> would repeat "unk unk unk"
  CHECK(best_tokens(babble, o) == std::vector<int32_t>{1, 1, 1, 4});
  // A beam of 3 that must reach 4 tokens: the best sequences under the same rules.
  o = toy_options(3, 3);
  o.max_len_a = 0;
  o.max_len_b = o.min_len = 4;
  o.ban_unk = true;
  CHECK(best_tokens(babble, o) == std::vector<int32_t>{4, 4, 4, 4});
  o.no_repeat_ngram = 2;
  const auto beams = decode::search(babble, {{4, 3}}, o);
  REQUIRE(beams.at(0).size() == 3);
  for (const auto& h : beams[0]) {
    CHECK(h.tokens.size() == 4);
    CHECK(std::count(h.tokens.begin(), h.tokens.end(), 1) == 0);
    CHECK(bigrams_unique(h.tokens));
  }
  SearchOptions s = toy_options(8, 1);  // sampling: 8 samples, never <unk>, no repeated bigram
  s.sampling = true;
  s.sampling_topk = 3;
  s.ban_unk = true;
  s.no_repeat_ngram = 2;
  s.max_len_a = 0;
  s.max_len_b = 6;
  s.nbest = 8;
  const auto samples = decode::search(babble, {{4, 3}}, s);
  REQUIRE(samples.at(0).size() == 8);
  for (const auto& h : samples[0]) {
    CHECK(std::count(h.tokens.begin(), h.tokens.end(), 1) == 0);
    CHECK(bigrams_unique(h.tokens));
  }
}

TEST_CASE("nucleus sampling (topp:P) draws only from the fewest best tokens holding P", "[decode][search]") {
  ToyScorer toy;  // after <s>: A 0.6, B 0.4
  SearchOptions o = toy_options(16, 16);
  o.sampling = true;
  o.sampling_topp = 0.5f;  // A alone holds 0.6
  auto first_tokens = [&] {
    std::set<int32_t> first;
    const auto samples = decode::search(toy, {{4, 3}}, o);
    for (const auto& h : samples.at(0)) first.insert(h.tokens.empty() ? -1 : h.tokens[0]);
    return first;
  };
  CHECK(first_tokens() == std::set<int32_t>{4});
  o.sampling_topp = 0.9f;  // A and B
  CHECK(first_tokens() == std::set<int32_t>{4, 5});
  o.sampling_topk = 2;  // top-k and top-p together are refused
  CHECK_THROWS_WITH(decode::validate(o), Catch::Contains("nucleus"));
}

TEST_CASE("a target prefix starts every hypothesis and its log-probabilities count in the score", "[decode][search]") {
  ToyScorer toy;  // source {4}: after bos A 0.6, B 0.4; after A: eos, A, B 1/3 each; after B: eos 1
  // Prefix "A": beam 2 can no longer reach "B"; "A" then </s> (1/3; the tie goes to the lower id).
  auto r = decode::search(toy, {{4, 3}}, toy_options(2), {}, {{}, {{4}}, {}});
  CHECK(r[0][0].tokens == std::vector<int32_t>{4});
  CHECK(r[0][0].log_prob == Approx(std::log(0.2)));
  // Prefix "B" on a sentence batched with one without a prefix (searched apart, output unchanged) and one
  // whose prefix is longer than what the model would say.
  toy.steps = 0;
  r = decode::search(toy, {{4, 3}, {5, 3}, {4, 3}}, toy_options(2), {}, {{}, {{5}, {}, {4, 4, 5}}, {}});
  CHECK(r[0][0].tokens == std::vector<int32_t>{5});
  CHECK(r[0][0].log_prob == Approx(std::log(0.4)));
  CHECK(r[1][0].tokens == std::vector<int32_t>{4});  // {5} swaps A and B: "A" at 0.4 unforced
  CHECK(r[1][0].log_prob == Approx(std::log(0.4)));
  CHECK(r[2][0].tokens == std::vector<int32_t>{4, 4, 5});  // after two tokens only </s> (1) is likely
  CHECK(r[2][0].log_prob == Approx(std::log(0.6) + std::log(1.0 / 3) - 30.0).margin(1e-3));
  // Max length counts after the prefix: 0 tokens allowed, the prefix alone.
  SearchOptions o = toy_options(2);
  o.max_len_a = 0;
  o.max_len_b = 0;
  r = decode::search(toy, {{4, 3}}, o, {}, {{}, {{4, 4}}, {}});
  CHECK(r[0][0].tokens == std::vector<int32_t>{4, 4});
  // A prefix that fills the model's positions is an error, not a crash.
  CHECK_THROWS_AS(decode::search(toy, {{4, 3}}, toy_options(1), {}, {{}, {std::vector<int32_t>(49, 4)}, {}}), tt::Error);
  CHECK_THROWS_AS(decode::search(toy, {{4, 3}}, toy_options(1), {}, {{}, {{4}, {4}}, {}}), tt::Error);  // 2 for 1 source
}

TEST_CASE("alternatives: the N best first tokens after the prefix, each completed by the search", "[decode][search]") {
  ToyScorer toy;
  SearchOptions o = toy_options(1);
  o.alternatives = 2;
  auto r = decode::search(toy, {{4, 3}}, o);  // A (0.6) then </s>; B (0.4) then </s>: in first-token order
  REQUIRE(r[0].size() == 2);
  CHECK(r[0][0].tokens == std::vector<int32_t>{4});
  CHECK(r[0][0].log_prob == Approx(std::log(0.2)));
  CHECK(r[0][1].tokens == std::vector<int32_t>{5});
  CHECK(r[0][1].log_prob == Approx(std::log(0.4)));
  // After the prefix "A": A, B (1/3 each; </s> is not an alternative), then <unk> (e^-30), each completed.
  o.alternatives = 3;
  r = decode::search(toy, {{4, 3}, {5, 3}}, o, {}, {{}, {{4}, {}}, {}});
  REQUIRE(r[0].size() == 3);
  CHECK(r[0][0].tokens == std::vector<int32_t>{4, 4});
  CHECK(r[0][1].tokens == std::vector<int32_t>{4, 5});
  CHECK(r[0][2].tokens == std::vector<int32_t>{4, 1});
  CHECK(r[0][1].log_prob == Approx(std::log(0.6) + std::log(1.0 / 3)));
  REQUIRE(r[1].size() == 3);  // the other sentence: its own alternatives ({5} swaps A and B)
  CHECK(r[1][0].tokens == std::vector<int32_t>{5});
  CHECK(r[1][1].tokens == std::vector<int32_t>{4});
  o.nbest = 2;
  o.beam = 2;
  CHECK_THROWS_AS(decode::validate(o), tt::ConfigError);  // one hypothesis per alternative
}

TEST_CASE("repetition penalty: a held token's score is divided or multiplied, then normalised", "[decode][search]") {
  BabbleScorer babble;  // every step: <unk> 0.5, A 0.3, B 0.15, </s> 0.05
  SearchOptions o = toy_options(1);
  o.max_len_a = 0;
  o.max_len_b = 3;
  o.ban_unk = true;
  CHECK(best_tokens(babble, o) == std::vector<int32_t>{4, 4, 4});
  // Penalty 2 on log-probabilities (all negative: multiplied). After A: A's log 0.3 doubled is log 0.09,
  // below B's log 0.15: the greedy path alternates, then both are held and A (0.09) beats B (0.0225).
  o.repetition_penalty = 2.0f;
  const auto results = decode::search(babble, {{4, 3}}, o);
  CHECK(results[0][0].tokens == std::vector<int32_t>{4, 5, 4});
  // Step 2's distribution after the penalty: unk 0.5, A 0.09, B 0.15, eos 0.05, normalised by 0.79;
  // step 3: unk 0.5, A 0.09, B 0.0225, eos 0.05 over 0.6625.
  const double expected = std::log(0.3) + std::log(0.15 / 0.79) + std::log(0.09 / 0.6625) + std::log(0.05 / 0.6625);
  CHECK(results[0][0].log_prob == Approx(expected).epsilon(1e-5));
  o.repetition_penalty = 0.0f;
  CHECK_THROWS_AS(decode::validate(o), tt::ConfigError);
}

TEST_CASE("constraints: the ConstraintTracker's state of a hypothesis, worked", "[decode][constraints]") {
  using V = std::vector<int32_t>;
  const decode::detail::ConstraintTracker t({{7, 8, 9}, {4}, {4}});  // C = 5
  CHECK(t.total() == 5);
  auto st = t.state({});
  CHECK(st.met == 0);
  CHECK_FALSE(st.all_met());
  CHECK(st.next == V{4, 7});
  st = t.state({1, 7, 8});  // "7 8" is a partial match: 2 pieces, next 9
  CHECK(st.met == 2);
  CHECK(st.next == V{4, 9});
  st = t.state({4, 7, 8, 9, 1});  // 7 8 9 met (3), one of the two 4s (1)
  CHECK(st.met == 4);
  CHECK(st.next == V{4});
  st = t.state({4, 7, 8, 9, 4});
  CHECK(st.met == 5);
  CHECK(st.all_met());
  CHECK(st.next.empty());
  // Leaving out what cannot fit: a prefix already holding a phrase leaves room for the others.
  decode::Constraints phrases{{4, 5}, {6, 6, 6}, {}};
  CHECK(decode::fit_constraints(phrases, {}, 4) == std::vector<size_t>{1, 2});
  CHECK(phrases == decode::Constraints{{4, 5}});
  phrases = {{4, 5}, {6, 6, 6}};
  CHECK(decode::fit_constraints(phrases, {4, 5}, 5).empty());
}

TEST_CASE("constraints: every hypothesis holds every phrase, and the constrained optimum is found",
          "[decode][constraints]") {
  ToyScorer toy;  // source {4}: after bos A 0.6, B 0.4; after A: eos, A, B 1/3 each; after B: eos 1
  auto constrained = [&](const SearchOptions& o, const decode::Constraints& c, std::vector<int32_t> source = {4, 3}) {
    decode::SearchInputs in;
    in.constraints = {c};
    return decode::search(toy, {std::move(source)}, o, {}, in)[0];
  };
  // "A B": the only likely sequence holding it is A B </s> (0.6 * 1/3); greedy finds it too, as its one
  // place goes to the highest bank that has a candidate.
  for (int beam : {1, 2, 4}) {
    INFO("beam " << beam);
    const auto r = constrained(toy_options(beam), {{4, 5}});
    CHECK(r[0].tokens == std::vector<int32_t>{4, 5});
    CHECK(r[0].log_prob == Approx(std::log(0.2)));
  }
  // One phrase inside another: "A" is met inside "A B".
  CHECK(constrained(toy_options(2), {{4}, {4, 5}})[0].tokens == std::vector<int32_t>{4, 5});
  // The same phrase twice: A A.
  CHECK(constrained(toy_options(2), {{4}, {4}})[0].tokens == std::vector<int32_t>{4, 4});
  // n-best: every hypothesis holds "B".
  for (const auto& h : constrained(toy_options(3, 3), {{5}})) {
    CHECK(std::count(h.tokens.begin(), h.tokens.end(), 5) >= 1);
  }
  // min length 3 and "B": three pieces or more, B among them.
  SearchOptions o = toy_options(3);
  o.min_len = 3;
  const auto longer = constrained(o, {{5}});
  CHECK(longer[0].tokens.size() >= 3);
  CHECK(std::count(longer[0].tokens.begin(), longer[0].tokens.end(), 5) >= 1);
  // A phrase that cannot fit within the length limit (1 piece here) is left out: the unconstrained output.
  o = toy_options(2);
  o.max_len_a = 0;
  o.max_len_b = 1;
  CHECK(constrained(o, {{4, 5}})[0].tokens == std::vector<int32_t>{5});
  // A prefix that already holds the phrase: nothing more is needed.
  decode::SearchInputs in;
  in.prefixes = {{4}};
  in.constraints = {{{4}}};
  CHECK(decode::search(toy, {{4, 3}}, toy_options(2), {}, in)[0][0].tokens == std::vector<int32_t>{4});
  // Refused with sampling, a full beam or alternatives.
  o = toy_options(2);
  o.full_beam = true;
  CHECK_THROWS_AS(constrained(o, {{4}}), tt::ConfigError);
}

TEST_CASE("constraints: sentences searched together or alone give the same hypotheses", "[decode][constraints]") {
  ToyScorer toy;
  const std::vector<std::vector<int32_t>> sources{{4, 3}, {5, 3}, {4, 3}, {5, 3}, {4, 3}};
  const std::vector<decode::Constraints> constraints{{{4, 5}}, {}, {{4}, {4}}, {{5}}, {}};
  decode::SearchInputs all;
  all.constraints = constraints;
  const auto together = decode::search(toy, sources, toy_options(3, 2), {}, all);
  for (size_t i = 0; i < sources.size(); ++i) {
    decode::SearchInputs one;
    one.constraints = {constraints[i]};
    const auto alone = decode::search(toy, {sources[i]}, toy_options(3, 2), {}, one);
    REQUIRE(alone[0].size() == together[i].size());
    for (size_t k = 0; k < alone[0].size(); ++k) {
      CHECK(alone[0][k].tokens == together[i][k].tokens);
      CHECK(alone[0][k].score == together[i][k].score);
    }
  }
  // A sentence without constraints in a batch with some: as without any.
  const auto plain = decode::search(toy, {{5, 3}}, toy_options(3, 2));
  CHECK(plain[0][0].tokens == together[1][0].tokens);
  CHECK(plain[0][0].score == together[1][0].score);
}
