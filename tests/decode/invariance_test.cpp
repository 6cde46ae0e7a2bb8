// The headline of issue 8: a sentence's translation does not depend on which other sentences share its
// batch, nor on the thread count. A tiny model trained inside the test translates ~200 lines in batches of
// 1, 7 and 64 (sorted by length, so batch neighbours differ) on 1 and 2 threads: identical hypotheses,
// down to the bits of the scores. Also: an ensemble of two copies of a model is that model.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "data/spm_tokenizer.h"
#include "decode/forced_score.h"
#include "decode/search.h"
#include "decode/trained_fixture.h"
#include "io/model_dir.h"

using namespace tt;

namespace {

std::vector<std::vector<int32_t>> fixture_sources(const test::TrainedFixture& f) {
  auto spm = data::SpmTokenizer::load(f.model_dir + "/spm.model");
  std::vector<std::vector<int32_t>> sources;
  for (const auto& l : f.lines) {
    auto ids = spm.encode_ids(l);
    sources.emplace_back(ids.begin(), ids.end());
    sources.back().push_back(3);
  }
  return sources;
}

// Translates all sources in batches of `batch` (after sorting by length), returns them in input order.
std::vector<decode::Hypothesis> translate_all(int threads, int batch, const std::vector<std::vector<int32_t>>& sources,
                                              int models = 1, bool int8 = false) {
  const auto& f = test::trained_fixture();
  auto be = backend::make_backend("cpu", threads);
  REQUIRE(be->set_row_invariant(true));  // without it, ~170 of 200 lines differ in their score bits
  if (int8) REQUIRE(be->set_matmul_precision(backend::MatmulPrecision::int8));
  nlohmann::json full;
  auto config = io::load_model_config(f.model_dir, &full);
  std::vector<std::unique_ptr<nn::Transformer>> owned;
  std::vector<nn::Transformer*> ensemble;
  for (int m = 0; m < models; ++m) {
    owned.push_back(std::make_unique<nn::Transformer>(config, *be));
    io::load_model_weights(f.model_dir, owned.back()->params());
    ensemble.push_back(owned.back().get());
  }
  std::vector<size_t> order(sources.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sources[a].size() < sources[b].size(); });
  std::vector<decode::Hypothesis> out(sources.size());
  decode::SearchOptions o;
  o.max_len_b = 5;  // keeps the test fast where the little model does not stop by itself
  for (size_t i = 0; i < order.size(); i += static_cast<size_t>(batch)) {
    std::vector<std::vector<int32_t>> chunk;
    for (size_t j = i; j < std::min(order.size(), i + batch); ++j) chunk.push_back(sources[order[j]]);
    auto r = models == 1 ? decode::search(*ensemble.front(), chunk, o) : decode::search(ensemble, chunk, o);
    for (size_t j = 0; j < r.size(); ++j) out[order[i + j]] = r[j].front();
  }
  return out;
}

bool same(const decode::Hypothesis& a, const decode::Hypothesis& b) {
  return a.tokens == b.tokens && std::memcmp(&a.score, &b.score, sizeof(float)) == 0 &&
         std::memcmp(&a.log_prob, &b.log_prob, sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("translations are identical for batch sizes 1, 7, 64 and threads 1, 2", "[decode][invariance]") {
  const auto& f = test::trained_fixture();
  const auto sources = fixture_sources(f);
  REQUIRE(sources.size() >= 190);
  const auto reference = translate_all(1, 1, sources);
  // The fixture model has learnt something: most lines are copied exactly.
  int copied = 0;
  for (size_t i = 0; i < sources.size(); ++i)
    copied += reference[i].tokens == std::vector<int32_t>(sources[i].begin(), sources[i].end() - 1);
  INFO("lines copied exactly: " << copied << " of " << sources.size());
  CHECK(copied > static_cast<int>(sources.size()) / 4);
  for (auto [threads, batch] : {std::pair{1, 7}, std::pair{1, 64}, std::pair{2, 1}, std::pair{2, 7}, std::pair{2, 64}}) {
    const auto got = translate_all(threads, batch, sources);
    int differ = 0;
    for (size_t i = 0; i < sources.size(); ++i) differ += !same(got[i], reference[i]);
    INFO("threads " << threads << " batch " << batch);
    CHECK(differ == 0);
  }
}

TEST_CASE("an ensemble of two copies of a model translates as the model", "[decode][ensemble]") {
  const auto& f = test::trained_fixture();
  auto sources = fixture_sources(f);
  sources.resize(40);
  const auto one = translate_all(1, 16, sources);
  const auto two = translate_all(1, 16, sources, 2);
  for (size_t i = 0; i < sources.size(); ++i) CHECK(same(one[i], two[i]));
}

TEST_CASE("int8 translations are identical for batch sizes 1, 7, 64 and threads 1, 2, and close to float32",
          "[decode][invariance][int8]") {
  const auto& f = test::trained_fixture();
  auto sources = fixture_sources(f);
  sources.resize(100);
  const auto reference = translate_all(1, 1, sources, 1, true);
  for (auto [threads, batch] : {std::pair{1, 7}, std::pair{2, 64}}) {
    const auto got = translate_all(threads, batch, sources, 1, true);
    int differ = 0;
    for (size_t i = 0; i < sources.size(); ++i) differ += !same(got[i], reference[i]);
    INFO("threads " << threads << " batch " << batch);
    CHECK(differ == 0);
  }
  // int8 is not float32, but on this weakly trained fixture most lines come out the same (measured 83 of 100
  // with VNNI's 8-bit weights, 76 with the 7-bit weights of DNNL_MAX_CPU_ISA=AVX2).
  const auto fp32 = translate_all(1, 16, sources);
  int same_tokens = 0;
  for (size_t i = 0; i < sources.size(); ++i) same_tokens += fp32[i].tokens == reference[i].tokens;
  INFO("lines with the float32 tokens: " << same_tokens << " of " << sources.size());
  CHECK(same_tokens >= 70);
}

TEST_CASE("a worker model on a second backend reads the weights in place and translates alike", "[decode][workers]") {
  const auto& f = test::trained_fixture();
  auto sources = fixture_sources(f);
  sources.resize(40);
  auto first = backend::make_backend("cpu", 1), second = backend::make_backend("cpu", 1);
  REQUIRE(first->set_row_invariant(true));
  REQUIRE(second->set_row_invariant(true));
  nn::Transformer model(io::load_model_config(f.model_dir), *first, nn::Usage::inference);
  io::load_model_weights(f.model_dir, model.params());
  const nn::Transformer worker(model, *second);
  CHECK(&worker.backend() == second.get());
  CHECK(worker.usage() == nn::Usage::inference);
  CHECK(!worker.params().has_gradients());
  CHECK(worker.params().values().f32() == model.params().values().f32());  // no copy
  CHECK(worker.params().get("decoder.layers.0.self_attn.q_proj.weight").value.f32() ==
        model.params().get("decoder.layers.0.self_attn.q_proj.weight").value.f32());
  decode::SearchOptions o;
  o.max_len_b = 5;
  const auto a = decode::search(model, sources, o);
  const auto b = decode::search(const_cast<nn::Transformer&>(worker), sources, o);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(same(a[i].front(), b[i].front()));
}

TEST_CASE("a target prefix fed in one pass gives the bits of feeding it one token at a time", "[decode][prefix]") {
  const auto& f = test::trained_fixture();
  auto sources = fixture_sources(f);
  sources.resize(60);
  auto be = backend::make_backend("cpu", 2);
  REQUIRE(be->set_row_invariant(true));
  const auto config = io::load_model_config(f.model_dir);
  nn::Transformer model(config, *be, nn::Usage::inference), copy(config, *be, nn::Usage::inference);
  io::load_model_weights(f.model_dir, model.params());
  io::load_model_weights(f.model_dir, copy.params());
  const auto ids = decode::special_ids(config);
  decode::ModelScorer scorer(model, true);
  decode::SearchOptions o;
  o.beam = 1;
  o.max_len_b = 5;
  // Greedy search forced with the first half of its own output goes on exactly as it went (where it
  // stopped by itself: the length limit counts after a prefix).
  const auto plain = decode::search(scorer, sources, o, ids);
  std::vector<std::vector<int32_t>> prefixes;
  for (const auto& r : plain) prefixes.emplace_back(r[0].tokens.begin(), r[0].tokens.begin() + std::ptrdiff_t(r[0].tokens.size() / 2));
  const auto forced = decode::search(scorer, sources, o, ids, {{}, prefixes, {}});
  int compared = 0, with_prefix = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (plain[i][0].tokens.size() >= sources[i].size() - 1 + 5) continue;  // stopped by the limit
    ++compared;
    with_prefix += !prefixes[i].empty();
    INFO("line " << i);
    CHECK(same(forced[i][0], plain[i][0]));
  }
  INFO("compared " << compared << ", with a prefix " << with_prefix);
  CHECK(with_prefix >= 20);
  // Beam 4 with prefixes: every hypothesis starts with its prefix, the bits do not depend on the batch, an
  // ensemble of two copies gives the model's bits, and scoring the output gives back the search's score.
  o.beam = 4;
  o.length_penalty = decode::LengthPenalty::none;
  const auto beam = decode::search(scorer, sources, o, ids, {{}, prefixes, {}});
  decode::EnsembleScorer two({&model, &copy});
  const auto ensemble = decode::search(two, sources, o, ids, {{}, prefixes, {}});
  std::vector<std::vector<int32_t>> outputs;
  for (size_t i = 0; i < sources.size(); ++i) {
    INFO("line " << i);
    const auto one = decode::search(scorer, {sources[i]}, o, ids, {{}, {prefixes[i]}, {}});
    CHECK(same(one[0][0], beam[i][0]));
    CHECK(same(ensemble[i][0], beam[i][0]));
    CHECK(std::equal(prefixes[i].begin(), prefixes[i].end(), beam[i][0].tokens.begin()));
    outputs.push_back(beam[i][0].tokens);
  }
  const auto scored = decode::score_targets(scorer, sources, outputs, o, ids);
  for (size_t i = 0; i < sources.size(); ++i) {
    INFO("line " << i);
    CHECK(std::memcmp(&scored[i].log_prob, &beam[i][0].log_prob, sizeof(float)) == 0);
  }
}
