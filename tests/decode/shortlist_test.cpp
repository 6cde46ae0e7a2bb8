// The vocabulary shortlist (decode/shortlist.h): counting a corpus (worked numbers), a batch's columns,
// the file, and decoding over it: the restricted output layer gives the model's logits, the estimate of
// the pieces left out keeps the log-probabilities close to the full softmax's, a shortlist of the whole
// vocabulary changes no bit of a search, and a search never outputs a piece outside its batch's columns.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "backend/backend.h"
#include "data/spm_tokenizer.h"
#include "decode/scorer.h"
#include "decode/search.h"
#include "decode/shortlist.h"
#include "decode/trained_fixture.h"
#include "io/model_dir.h"
#include "support/tmp_dir.h"
#include "util/error.h"

using namespace tt;

TEST_CASE("ShortlistBuilder keeps the pieces that co-occur beyond chance, by count-weighted PMI", "[decode][shortlist]") {
  // Ids 0-3 are special (skipped as targets). Four pairs:
  //   s{4} t{5 5}, s{4 6} t{5 7}, s{6} t{7}, s{6} t{5}
  // n_s4 = 2, n_s6 = 3, n_t5 = 3, n_t7 = 2, N = 4.
  //   (4,5): 2 log(2*4 / (2*3)) = 0.575 > 0   (4,7): 1 log(1*4 / (2*2)) = 0: not kept
  //   (6,5): 2 log(2*4 / (3*3)) < 0: not kept  (6,7): 2 log(2*4 / (3*2)) > 0
  decode::ShortlistBuilder b(8, 8, {0, 1, 2, 3});
  b.add({4}, {5, 5}, "l1");
  b.add({4, 6}, {5, 7}, "l2");
  b.add({6}, {7}, "l3");
  b.add({6}, {5}, "l4");
  CHECK(b.pairs() == 4);
  const decode::Shortlist s = b.build(1, 10);
  CHECK(s.best(4) == std::vector<int32_t>{5});
  CHECK(s.best(6) == std::vector<int32_t>{7});
  CHECK(s.best(5).empty());
  // Frequency: 5 four times, 7 twice; the rest by id.
  CHECK(s.by_frequency() == std::vector<int32_t>{5, 7, 0, 1, 2, 3, 4, 6});
  CHECK(s.frequent() == 1);
  CHECK_THROWS_WITH(b.add({9}, {5}, "corpus.en:7"), Catch::Contains("corpus.en:7") && Catch::Contains("source id 9"));
}

TEST_CASE("Shortlist::columns: frequent, required and best pieces, rounded up, and a sample of the rest", "[decode][shortlist]") {
  const int V = 1000;
  std::vector<int32_t> order(V);
  for (int i = 0; i < V; ++i) order[static_cast<size_t>(i)] = i;  // id order = frequency order
  std::vector<std::vector<int32_t>> best(static_cast<size_t>(V));
  for (int i = 0; i < V; ++i) best[static_cast<size_t>(i)] = {(i + 500) % V};
  const decode::Shortlist s(10, order, best);
  const auto c = s.columns({{1, 2, 3}, {2}, {5000}}, {3, 999});
  // Kept: 0..9, 999, 501, 502, 503 = 14; with 256 sampled, 270 rounds up to 320, so 50 more frequent
  // ids (10..59) are kept; the other 936 are left out, 256 of them sampled.
  REQUIRE(c.ids.size() == 320);
  CHECK(std::is_sorted(c.ids.begin(), c.ids.end()));
  CHECK(std::adjacent_find(c.ids.begin(), c.ids.end()) == c.ids.end());
  for (int32_t t : {0, 9, 10, 59, 501, 502, 503, 999})
    CHECK(std::binary_search(c.ids.begin(), c.ids.end(), t));
  CHECK(c.sample.size() == 256);
  for (int32_t col : c.sample) {
    const int32_t t = c.ids[static_cast<size_t>(col)];
    CHECK((t >= 60 && t != 501 && t != 502 && t != 503 && t != 999));
  }
  CHECK(c.rest_log_weight == Approx(std::log((936.0 - 256.0) / 256.0)));
  CHECK(decode::column_of(&c.ids, 999) == 319);
  CHECK(decode::column_of(&c.ids, c.ids[100]) == 100);
  CHECK(decode::column_of(nullptr, 77) == 77);
  // The whole vocabulary kept: nothing left out, nothing to estimate.
  const auto all = decode::Shortlist(V, order, best).columns({{1}}, {});
  CHECK(all.ids.size() == static_cast<size_t>(V));
  CHECK(all.sample.empty());
}

TEST_CASE("a shortlist file round-trips, and a damaged one is a FormatError naming its line", "[decode][shortlist]") {
  test::TmpDir dir;
  const decode::Shortlist s(2, {3, 1, 0, 2, 4}, {{1, 2}, {}, {4}});
  s.save(dir.file("sl.txt"));
  const decode::Shortlist back = decode::Shortlist::load(dir.file("sl.txt"));
  CHECK(back.frequent() == 2);
  CHECK(back.by_frequency() == s.by_frequency());
  CHECK(back.best(0) == std::vector<int32_t>{1, 2});
  CHECK(back.best(1).empty());
  CHECK(back.best(2) == std::vector<int32_t>{4});
  const std::string header = "tt-shortlist 1\nsource_vocab 3 target_vocab 5 frequent 2 best 2\n";
  struct Bad {
    std::string text, message;
  };
  for (const Bad& bad : {Bad{"hello\n", ":1: not a tt shortlist"},
                         Bad{"tt-shortlist 1\nsource_vocab 3\n", ":2: expected 'source_vocab"},
                         Bad{header + "3 1 0 2\n", ":3: the frequency order lists 4"},
                         Bad{header + "3 1 0 2 2\n", ":3: target id 2 is listed twice"},
                         Bad{header + "3 1 0 2 4\n1\n1 x\n", ":5: expected target ids in [0, 5), got 'x'"},
                         Bad{header + "3 1 0 2 4\n1\n5\n", ":5: expected target ids in [0, 5), got '5'"},
                         Bad{header + "3 1 0 2 4\n1 2 3\n", ":4: 3 target ids, more than best 2"},
                         Bad{header + "3 1 0 2 4\n1\n", "ends before a line per source id"},
                         Bad{header + "3 1 0 2 4\n\n\n\n\n", ":7: more lines than source_vocab 3"}}) {
    INFO(bad.text);
    const std::string path = dir.write("bad.txt", bad.text);
    CHECK_THROWS_AS(decode::Shortlist::load(path), FormatError);
    CHECK_THROWS_WITH(decode::Shortlist::load(path), Catch::Contains(bad.message));
  }
}

namespace {

// A small model with random weights over V pieces on a row-invariant CPU backend.
struct RandomModel {
  explicit RandomModel(int V, uint64_t seed)
      : be(backend::make_backend("cpu", 1)),
        model(tt::test::small_decoding_config(V, 1, 32), *be, nn::Usage::inference) {
    REQUIRE(be->set_row_invariant(true));
    model.init_parameters(seed);
  }
  std::unique_ptr<backend::Backend> be;
  nn::Transformer model;
};

float logsumexp(const float* x, size_t n) {
  const float top = *std::max_element(x, x + n);
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += std::exp(static_cast<double>(x[i]) - top);
  return top + static_cast<float>(std::log(s));
}

}  // namespace

TEST_CASE("decoding over a shortlist: the model's logits, and log-probabilities close to the full softmax's",
          "[decode][shortlist]") {
  const int V = 1500;
  RandomModel random(V, 11);
  nn::Transformer& model = random.model;
  const nn::ModelConfig& c = model.config();
  std::vector<int32_t> order(V);
  for (int i = 0; i < V; ++i) order[static_cast<size_t>(i)] = (i * 7) % V;  // 7 and 1500 are coprime
  std::vector<std::vector<int32_t>> best(static_cast<size_t>(V));
  for (int i = 0; i < V; ++i) best[static_cast<size_t>(i)] = {(i * 3) % V, (i * 5 + 1) % V};
  const decode::Shortlist list(40, order, best);
  const std::vector<std::vector<int32_t>> sources{{10, 11, 12, 3}, {400, 3}};
  const std::vector<int32_t> tokens{2, 2}, next{17, 801};
  for (bool logits : {true, false}) {
    decode::ModelScorer full(model, logits), short_(model, logits, &list);
    full.start(sources, 2, 4, {3});
    short_.start(sources, 2, 4, {3, 17, 801});
    REQUIRE(short_.columns());
    const std::vector<int32_t> ids = *short_.columns();
    REQUIRE(ids.size() < static_cast<size_t>(V) / 2);
    const int32_t pad = decode::column_of(&ids, c.pad_id);
    REQUIRE(pad >= 0);
    for (int step = 0; step < 2; ++step) {
      const std::vector<float> f = full.step(step == 0 ? tokens : next, nullptr).to_host_f32();
      const std::vector<float> s = short_.step(step == 0 ? tokens : next, nullptr).to_host_f32();
      REQUIRE(s.size() == 2 * ids.size());
      for (size_t r = 0; r < 2; ++r) {
        const float* fr = f.data() + r * V;
        const float* sr = s.data() + r * ids.size();
        // The pieces left out shift a plain renormalisation by this much; the estimate must do far better.
        std::vector<float> kept;
        for (size_t j = 0; j < ids.size(); ++j)
          if (static_cast<int32_t>(j) != pad) kept.push_back(fr[ids[j]]);
        const float naive_shift = logits ? 0.0f : logsumexp(fr, V) - logsumexp(kept.data(), kept.size());
        float worst = 0;
        for (size_t j = 0; j < ids.size(); ++j) {
          if (static_cast<int32_t>(j) == pad) continue;
          if (logits) CHECK(sr[j] == Approx(fr[ids[j]]).margin(1e-5));
          else worst = std::max(worst, std::abs(sr[j] - fr[ids[j]]));
        }
        if (!logits) {
          INFO("row " << r << ": plain renormalisation is off by " << naive_shift << ", the estimate by " << worst);
          CHECK(naive_shift > 0.5f);
          CHECK(worst < naive_shift / 10);
        }
      }
    }
  }
}

TEST_CASE("search over a shortlist: the whole vocabulary changes no bit, a short one outputs only its columns",
          "[decode][shortlist]") {
  const auto& f = test::trained_fixture();
  auto be = backend::make_backend("cpu", 1);
  REQUIRE(be->set_row_invariant(true));
  const auto config = io::load_model_config(f.model_dir);
  nn::Transformer model(config, *be, nn::Usage::inference);
  io::load_model_weights(f.model_dir, model.params());
  auto spm = data::SpmTokenizer::load(f.model_dir + "/spm.model");
  std::vector<std::vector<int32_t>> sources;
  decode::ShortlistBuilder builder(config.vocab_size_src, config.vocab_size_tgt,
                                   {config.pad_id, config.bos_id, config.eos_id, config.unk_id});
  for (size_t i = 0; i < 40; ++i) {
    auto v = spm.encode_ids(f.lines[i]);
    std::vector<int32_t> ids(v.begin(), v.end());
    builder.add(ids, ids, "line");  // the copy task's own corpus
    ids.push_back(config.eos_id);
    sources.push_back(std::move(ids));
  }
  const auto ids = decode::special_ids(config);
  decode::SearchOptions o;
  o.max_len_b = 5;
  decode::ModelScorer plain(model, true);
  const auto reference = decode::search(plain, sources, o, ids);

  const decode::Shortlist everything = builder.build(config.vocab_size_tgt, 5);
  decode::ModelScorer whole(model, true, &everything);
  const auto same = decode::search(whole, sources, o, ids);
  for (size_t i = 0; i < sources.size(); ++i) {
    INFO("line " << i);
    CHECK(same[i][0].tokens == reference[i][0].tokens);
    CHECK(std::memcmp(&same[i][0].score, &reference[i][0].score, sizeof(float)) == 0);
  }

}

TEST_CASE("a search over a short list outputs only its batch's columns, keeps a constraint's pieces, and an "
          "ensemble of two copies gives its bits",
          "[decode][shortlist]") {
  const int V = 1500;
  RandomModel random(V, 12);
  nn::Transformer& model = random.model;
  const nn::ModelConfig& c = model.config();
  std::vector<int32_t> order(V);
  for (int i = 0; i < V; ++i) order[static_cast<size_t>(i)] = V - 1 - i;
  std::vector<std::vector<int32_t>> best(static_cast<size_t>(V));
  for (int i = 0; i < V; ++i) best[static_cast<size_t>(i)] = {(i * 11 + 5) % V};
  const decode::Shortlist list(20, order, best);
  decode::ModelScorer scorer(model, true, &list);
  nn::Transformer copy(model, *random.be);  // the same weights: an ensemble of the two is the model, bit for bit
  decode::EnsembleScorer two({&model, &copy}, &list);
  const auto ids = decode::special_ids(c);
  decode::SearchOptions o;
  o.max_len_b = 6;
  for (int32_t first = 4; first < 200; first += 13) {
    INFO("source " << first);
    const std::vector<int32_t> source{first, first + 1, first * 2, c.eos_id};
    const auto without = list.columns({source}, {c.eos_id, c.unk_id, c.pad_id}).ids;
    int32_t term = 700;  // a piece no list of this source holds
    while (std::binary_search(without.begin(), without.end(), term)) ++term;
    const auto out = decode::search(scorer, {source}, o, ids, {{}, {}, {{{term}}}});
    const auto pair = decode::search(two, {source}, o, ids, {{}, {}, {{{term}}}});
    CHECK(pair[0][0].tokens == out[0][0].tokens);
    CHECK(std::memcmp(&pair[0][0].score, &out[0][0].score, sizeof(float)) == 0);
    const auto cols = list.columns({source}, {c.eos_id, c.unk_id, c.pad_id, term}).ids;
    REQUIRE(cols.size() < static_cast<size_t>(V) / 2);
    const auto& tokens = out[0][0].tokens;
    CHECK(std::find(tokens.begin(), tokens.end(), term) != tokens.end());
    for (int32_t t : tokens) CHECK(std::binary_search(cols.begin(), cols.end(), t));
  }
}
