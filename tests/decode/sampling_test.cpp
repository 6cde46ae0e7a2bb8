// Sampling (SearchOptions::sampling) on the hand-written toy distribution of search_test.cpp's scorer:
// the first token's frequencies over many sentences match the model's probabilities (and their tempered
// form), top-1 sampling is greedy, a sample keeps the model's own log-probability, and a sentence's
// samples depend only on its random stream, not on the batch.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>

#include "backend/backend.h"
#include "decode/search.h"
#include "util/error.h"

using namespace tt;
using decode::SearchOptions;

namespace {

// Vocabulary: 0 pad, 1 unk, 2 bos, 3 eos, 4 A, 5 B; every source alike. After bos: A 0.6, B 0.4 (pad,
// unk ~e^-30); after A: eos, A, B 1/3 each; after B or two tokens: eos.
class Toy final : public decode::StepScorer {
 public:
  int vocab_size() const override { return 6; }
  int max_positions() const override { return 50; }
  void start(const std::vector<std::vector<int32_t>>& sources, int, int, const std::vector<int32_t>&) override {
    history_.assign(sources.size(), {});
  }
  tensor::Tensor step(const std::vector<int32_t>& tokens, std::vector<float>*) override {
    std::vector<float> lp(tokens.size() * 6, -30.0f);
    for (size_t r = 0; r < tokens.size(); ++r) {
      if (tokens[r] != 2) history_[r].push_back(tokens[r]);
      float* p = &lp[r * 6];
      const auto& h = history_[r];
      if (h.empty()) {
        p[4] = std::log(0.6f);
        p[5] = std::log(0.4f);
      } else if (h.size() == 1 && h[0] == 4) {
        p[3] = p[4] = p[5] = std::log(1.0f / 3.0f);
      } else {
        p[3] = 0.0f;
      }
    }
    return tensor::Tensor::from_host(*backend_, tensor::Shape{static_cast<int64_t>(tokens.size()), 6}, lp);
  }
  void reorder(const std::vector<int32_t>& index) override {
    std::vector<std::vector<int32_t>> next;
    for (int32_t i : index) next.push_back(history_[static_cast<size_t>(i)]);
    history_ = next;
  }

 private:
  std::vector<std::vector<int32_t>> history_;
  std::unique_ptr<backend::Backend> backend_ = backend::make_backend("cpu", 1);
};

SearchOptions sampling(int topk, float temperature, int beam = 1) {
  SearchOptions o;
  o.sampling = true;
  o.sampling_topk = topk;
  o.temperature = temperature;
  o.beam = beam;
  o.length_penalty = decode::LengthPenalty::none;
  return o;
}

double fraction_starting_with_a(const std::vector<std::vector<decode::Hypothesis>>& r) {
  double a = 0;
  for (const auto& hyps : r) a += !hyps.front().tokens.empty() && hyps.front().tokens.front() == 4;
  return a / static_cast<double>(r.size());
}

}  // namespace

TEST_CASE("sampling draws tokens with the model's probabilities, tempered", "[decode][sampling]") {
  Toy toy;
  const std::vector<std::vector<int32_t>> sources(3000, std::vector<int32_t>{4, 3});
  // 3000 draws: the standard deviation of a frequency is below 0.009; 0.03 is over 3 of them.
  for (int topk : {0, 2}) {
    INFO("topk " << topk);
    CHECK(std::abs(fraction_starting_with_a(decode::search(toy, sources, sampling(topk, 1.0f))) - 0.6) < 0.03);
    // T = 2: p^(1/2) normalised, sqrt(.6) / (sqrt(.6) + sqrt(.4)) = 0.5505
    CHECK(std::abs(fraction_starting_with_a(decode::search(toy, sources, sampling(topk, 2.0f))) - 0.5505) < 0.03);
  }
  // A sample keeps the model's own log-probability (not the tempered one): "B" is log 0.4 + log 1.
  const auto r = decode::search(toy, sources, sampling(0, 2.0f));
  int b = 0;
  for (const auto& hyps : r)
    if (hyps.front().tokens == std::vector<int32_t>{5}) {
      CHECK(hyps.front().log_prob == Approx(std::log(0.4)));
      ++b;
    }
  CHECK(b > 1000);
}

TEST_CASE("top-1 sampling is greedy, and beam N gives N samples ranked by score", "[decode][sampling]") {
  Toy toy;
  SearchOptions greedy;
  greedy.beam = 1;
  greedy.length_penalty = decode::LengthPenalty::none;
  const auto g = decode::search(toy, {{4, 3}}, greedy);
  const auto s = decode::search(toy, {{4, 3}, {4, 3}}, sampling(1, 0.7f));
  CHECK(s[0].front().tokens == g[0].front().tokens);  // "A", then </s> (ties: the lower id)
  CHECK(s[1].front().tokens == g[0].front().tokens);
  SearchOptions eight = sampling(0, 1.0f, 8);
  eight.nbest = 8;
  const auto n = decode::search(toy, {{4, 3}}, eight);
  REQUIRE(n[0].size() == 8);
  for (size_t i = 1; i < 8; ++i) CHECK(n[0][i - 1].score >= n[0][i].score);
}

TEST_CASE("a sentence's samples depend on its stream and the seed, not on its batch", "[decode][sampling]") {
  Toy toy;
  const std::vector<std::vector<int32_t>> sources(200, std::vector<int32_t>{4, 3});
  std::vector<uint64_t> streams(200);
  std::iota(streams.begin(), streams.end(), 1000);
  const auto all = decode::search(toy, sources, sampling(0, 1.0f), {}, {streams, {}, {}});
  const std::vector<std::vector<int32_t>> part(sources.begin() + 50, sources.begin() + 70);
  const std::vector<uint64_t> part_streams(streams.begin() + 50, streams.begin() + 70);
  const auto some = decode::search(toy, part, sampling(0, 1.0f), {}, {part_streams, {}, {}});
  for (size_t i = 0; i < some.size(); ++i) CHECK(some[i].front().tokens == all[50 + i].front().tokens);
  SearchOptions other = sampling(0, 1.0f);
  other.seed = 2;
  const auto reseeded = decode::search(toy, sources, other, {}, {streams, {}, {}});
  int differ = 0;
  for (size_t i = 0; i < sources.size(); ++i) differ += reseeded[i].front().tokens != all[i].front().tokens;
  CHECK(differ > 20);
  CHECK_THROWS_AS(decode::search(toy, sources, sampling(0, 1.0f), {}, {part_streams, {}, {}}), Error);
}

TEST_CASE("sampling options out of range are errors naming the option", "[decode][sampling]") {
  CHECK_THROWS_WITH(decode::validate(sampling(-1, 1.0f)), Catch::Contains("top-k"));
  CHECK_THROWS_WITH(decode::validate(sampling(5, 0.0f)), Catch::Contains("temperature"));
  CHECK_THROWS_WITH(decode::validate(sampling(5, std::nanf(""))), Catch::Contains("temperature"));
  CHECK_THROWS_WITH(decode::validate(sampling(5, 1.0f, 2000)), Catch::Contains("samples per sentence"));
  SearchOptions full = sampling(5, 1.0f);
  full.full_beam = true;
  CHECK_THROWS_WITH(decode::validate(full), Catch::Contains("full beam"));
}
