#include "train/batcher.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <vector>

#include "util/error.h"

using tt::data::ParallelCorpus;
using tt::nn::Batch;
using tt::train::BatchPosition;
using tt::train::Batcher;
using tt::train::BatcherOptions;

namespace {

constexpr int32_t first_marker = 100;  // source id 0 of pair i is first_marker + i: rows name their pair

// n pairs with pseudo-random lengths, source 2..max_len incl. eos, target within 2 of it (as translations are).
ParallelCorpus random_corpus(int n, int max_len, uint32_t state = 12345) {
  std::vector<std::vector<int32_t>> src, tgt;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<int>(state >> 16);
  };
  for (int i = 0; i < n; ++i) {
    const int ls = 2 + next() % (max_len - 1), lt = std::max(1, ls - 1 + next() % 5 - 2);
    std::vector<int32_t> s(static_cast<size_t>(ls), 7), t(static_cast<size_t>(lt), 8);
    s[0] = first_marker + i;
    s.back() = 3;
    src.push_back(s);
    tgt.push_back(t);
  }
  return ParallelCorpus::from_ids(src, tgt);
}

std::vector<int> pairs_of(const Batch& b) {
  std::vector<int> pairs;
  for (int r = 0; r < b.B; ++r) pairs.push_back(b.src[static_cast<size_t>(r) * b.S] - first_marker);
  return pairs;
}

std::vector<std::vector<int>> take(Batcher& batcher, int64_t count) {
  std::vector<std::vector<int>> out;
  for (int64_t k = 0; k < count; ++k) out.push_back(pairs_of(batcher.next()));
  return out;
}

// The layout contract for one batch, checked against the corpus.
void check_layout(const Batch& b, const ParallelCorpus& c, const BatcherOptions& o) {
  int S = 0, T = 0;
  for (int p : pairs_of(b)) {
    S = std::max(S, c.source_length(static_cast<size_t>(p)));
    T = std::max(T, c.target_length(static_cast<size_t>(p)) + 1);
  }
  REQUIRE(b.S == S);
  REQUIRE(b.T == T);
  REQUIRE(b.src.size() == static_cast<size_t>(b.B * b.S));
  REQUIRE(b.tgt_in.size() == static_cast<size_t>(b.B * b.T));
  REQUIRE(b.tgt_out.size() == static_cast<size_t>(b.B * b.T));
  const auto pairs = pairs_of(b);
  for (int r = 0; r < b.B; ++r) {
    const auto src = c.source(static_cast<size_t>(pairs[static_cast<size_t>(r)]));
    const auto tgt = c.target(static_cast<size_t>(pairs[static_cast<size_t>(r)]));
    const int ls = static_cast<int>(src.size()), lt = static_cast<int>(tgt.size());
    CHECK(b.src_lengths[static_cast<size_t>(r)] == ls);
    CHECK(b.tgt_lengths[static_cast<size_t>(r)] == lt + 1);
    for (int j = 0; j < b.S; ++j) {
      CHECK(b.src[static_cast<size_t>(r * b.S + j)] == (j < ls ? src[static_cast<size_t>(j)] : o.pad_id));
    }
    for (int j = 0; j < b.T; ++j) {
      const auto k = static_cast<size_t>(r * b.T + j);
      CHECK(b.tgt_in[k] == (j == 0 ? o.bos_id : j <= lt ? tgt[static_cast<size_t>(j - 1)] : o.pad_id));
      CHECK(b.tgt_out[k] == (j < lt ? tgt[static_cast<size_t>(j)] : j == lt ? o.eos_id : o.pad_id));
    }
  }
}

// Adds a batch's padded slots and all its slots (source + target, target counted once).
void count_padding(int64_t& padded, int64_t& all, const Batch& b) {
  for (size_t r = 0; r < static_cast<size_t>(b.B); ++r) padded += (b.S - b.src_lengths[r]) + (b.T - b.tgt_lengths[r]);
  all += static_cast<int64_t>(b.B) * (b.S + b.T);
}

}  // namespace

TEST_CASE("batch layout on a worked example: right padding, bos + target, target + eos", "[train][batcher]") {
  // Pair 0: source "5 6 </s>", target "8 9"; pair 1: source "7 </s>", target "10".
  auto corpus = ParallelCorpus::from_ids({{5, 6, 3}, {7, 3}}, {{8, 9}, {10}});
  BatcherOptions o;
  o.pad_id = 0;
  auto in_order = Batcher::in_order(corpus, o);
  REQUIRE(in_order.size() == 1);
  const Batch& b = in_order[0];
  CHECK(b.B == 2);
  CHECK(b.S == 3);
  CHECK(b.T == 3);
  CHECK(b.pad_id == 0);
  CHECK(b.src == std::vector<int32_t>{5, 6, 3, /**/ 7, 3, 0});
  CHECK(b.tgt_in == std::vector<int32_t>{2, 8, 9, /**/ 2, 10, 0});
  CHECK(b.tgt_out == std::vector<int32_t>{8, 9, 3, /**/ 10, 3, 0});
  CHECK(b.src_lengths == std::vector<int32_t>{3, 2});
  CHECK(b.tgt_lengths == std::vector<int32_t>{3, 2});
  CHECK(b.target_tokens() == 5);

  // The training plan sorts by length (pair 1 first) and pads with the configured ids.
  o.pad_id = 1;
  o.bos_id = 40;
  o.eos_id = 41;
  Batcher batcher(corpus, o);
  REQUIRE(batcher.batches_per_epoch() == 1);
  Batch t = batcher.next();
  CHECK(t.src == std::vector<int32_t>{7, 3, 1, /**/ 5, 6, 3});
  CHECK(t.tgt_in == std::vector<int32_t>{40, 10, 1, /**/ 40, 8, 9});
  CHECK(t.tgt_out == std::vector<int32_t>{10, 41, 1, /**/ 8, 9, 41});
  CHECK(t.src_lengths == std::vector<int32_t>{2, 3});
  CHECK(t.tgt_lengths == std::vector<int32_t>{2, 3});
  CHECK(t.pad_id == 1);
  // 2 padded slots (one source, one target) of 2 * 3 + 2 * 3.
  CHECK(batcher.padding_fraction() == Approx(2.0 / 12.0));
}

TEST_CASE("the token bound holds for every batch and each pair is seen once per epoch", "[train][batcher]") {
  auto corpus = random_corpus(600, 30);
  BatcherOptions o;
  o.batch_tokens = 96;
  o.seed = 7;
  Batcher batcher(corpus, o);
  const int64_t nb = batcher.batches_per_epoch();
  REQUIRE(nb > 20);
  CHECK(batcher.oversize_pairs() == 0);
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    INFO("epoch " << epoch);
    CHECK(batcher.position() == BatchPosition{epoch, 0});
    std::vector<int> seen(600, 0);
    for (int64_t k = 0; k < nb; ++k) {
      Batch b = batcher.next();
      check_layout(b, corpus, o);
      CHECK(static_cast<int64_t>(b.B) * b.S <= o.batch_tokens);
      CHECK(static_cast<int64_t>(b.B) * b.T <= o.batch_tokens);
      for (int p : pairs_of(b)) ++seen[static_cast<size_t>(p)];
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  }
  CHECK(batcher.position() == BatchPosition{3, 0});
}

TEST_CASE("length sorting keeps padding well below that of corpus order", "[train][batcher]") {
  auto corpus = random_corpus(600, 30);
  BatcherOptions o;
  o.batch_tokens = 256;
  Batcher batcher(corpus, o);
  int64_t padded = 0, all = 0;
  for (const Batch& b : Batcher::in_order(corpus, o)) {
    count_padding(padded, all, b);
  }
  const double unsorted = static_cast<double>(padded) / static_cast<double>(all);
  INFO("sorted " << batcher.padding_fraction() << ", corpus order " << unsorted);
  CHECK(unsorted > 0.25);
  CHECK(batcher.padding_fraction() < 0.15);
  CHECK(batcher.padding_fraction() > 0.0);

  // The fraction is what the epoch's batches really contain.
  padded = all = 0;
  for (int64_t k = 0; k < batcher.batches_per_epoch(); ++k) {
    Batch b = batcher.next();
    count_padding(padded, all, b);
  }
  CHECK(batcher.padding_fraction() == Approx(static_cast<double>(padded) / static_cast<double>(all)));
}

TEST_CASE("the batch order depends only on the seed and the epoch", "[train][batcher]") {
  auto corpus = random_corpus(400, 20);
  BatcherOptions o;
  o.batch_tokens = 64;
  o.seed = 11;
  Batcher a(corpus, o), b(corpus, o);
  const int64_t nb = a.batches_per_epoch();
  const auto a0 = take(a, nb), a1 = take(a, nb);
  CHECK(a0 == take(b, nb));
  CHECK(a1 == take(b, nb));
  CHECK(a0 != a1);  // reshuffled each epoch
  // Same batches (as sets of pairs), in another order: the composition is fixed up to equal-length pairs.
  auto sizes = [](std::vector<std::vector<int>> v) {
    std::vector<size_t> s;
    for (auto& x : v) s.push_back(x.size());
    std::sort(s.begin(), s.end());
    return s;
  };
  CHECK(sizes(a0) == sizes(a1));

  BatcherOptions other = o;
  other.seed = 12;
  Batcher c(corpus, other);
  CHECK(take(c, nb) != a0);
}

TEST_CASE("pairs of equal lengths change batches between epochs, shapes do not", "[train][batcher]") {
  std::vector<std::vector<int32_t>> src, tgt;
  for (int i = 0; i < 100; ++i) {
    src.push_back({first_marker + i, 7, 3});
    tgt.push_back({8, 8});
  }
  auto corpus = ParallelCorpus::from_ids(src, tgt);
  BatcherOptions o;
  o.batch_tokens = 30;  // 10 pairs of S = 3, T = 3
  Batcher batcher(corpus, o);
  REQUIRE(batcher.batches_per_epoch() == 10);
  CHECK(batcher.padding_fraction() == 0.0);
  auto as_sets = [](const std::vector<std::vector<int>>& batches) {
    std::set<std::set<int>> sets;
    for (const auto& b : batches) sets.insert(std::set<int>(b.begin(), b.end()));
    return sets;
  };
  const auto e0 = take(batcher, 10), e1 = take(batcher, 10);
  for (const auto& b : e0) CHECK(b.size() == 10);
  for (const auto& b : e1) CHECK(b.size() == 10);
  CHECK(as_sets(e0) != as_sets(e1));
}

TEST_CASE("seek to a saved position continues exactly as the uninterrupted batcher", "[train][batcher]") {
  auto corpus = random_corpus(300, 25);
  BatcherOptions o;
  o.batch_tokens = 80;
  o.seed = 3;
  Batcher straight(corpus, o);
  const int64_t nb = straight.batches_per_epoch();
  for (int64_t stop : {int64_t{0}, int64_t{5}, nb - 1, nb, nb + 7}) {
    INFO("stop after " << stop);
    Batcher first(corpus, o);
    take(first, stop);
    const BatchPosition saved = first.position();
    CHECK(saved == BatchPosition{stop / nb, stop % nb});
    const auto expected = take(first, 2 * nb);
    Batcher resumed(corpus, o);
    resumed.seek(saved);
    CHECK(resumed.position() == saved);
    CHECK(take(resumed, 2 * nb) == expected);
  }
  Batcher batcher(corpus, o);
  CHECK_THROWS_AS(batcher.seek(BatchPosition{0, nb}), tt::Error);
  CHECK_THROWS_AS(batcher.seek(BatchPosition{0, -1}), tt::Error);
  CHECK_THROWS_AS(batcher.seek(BatchPosition{-1, 0}), tt::Error);
  CHECK(batcher.position() == BatchPosition{0, 0});
}

TEST_CASE("a pair bigger than the bound is a batch of its own, counted and never dropped", "[train][batcher]") {
  std::vector<std::vector<int32_t>> src, tgt;
  for (int i = 0; i < 20; ++i) {
    src.push_back({first_marker + i, 7, 3});
    tgt.push_back({8, 8});
  }
  src[13] = std::vector<int32_t>(40, 7);  // S = 40 > 32
  src[13][0] = first_marker + 13;
  tgt[17] = std::vector<int32_t>(35, 8);  // T = 36 > 32
  auto corpus = ParallelCorpus::from_ids(src, tgt);
  BatcherOptions o;
  o.batch_tokens = 32;
  Batcher batcher(corpus, o);
  CHECK(batcher.oversize_pairs() == 2);
  std::vector<int> seen(20, 0);
  for (int64_t k = 0; k < batcher.batches_per_epoch(); ++k) {
    Batch b = batcher.next();
    check_layout(b, corpus, o);
    const auto pairs = pairs_of(b);
    if (std::find(pairs.begin(), pairs.end(), 13) != pairs.end() ||
        std::find(pairs.begin(), pairs.end(), 17) != pairs.end()) {
      CHECK(b.B == 1);
    } else {
      CHECK(b.B * b.S <= 32);
      CHECK(b.B * b.T <= 32);
    }
    for (int p : pairs) ++seen[static_cast<size_t>(p)];
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
}

TEST_CASE("in_order cuts pairs in corpus order under the same bound", "[train][batcher]") {
  auto corpus = random_corpus(250, 20);
  BatcherOptions o;
  o.batch_tokens = 60;
  auto batches = Batcher::in_order(corpus, o);
  std::vector<int> order;
  for (const Batch& b : batches) {
    check_layout(b, corpus, o);
    CHECK(static_cast<int64_t>(b.B) * b.S <= o.batch_tokens);
    CHECK(static_cast<int64_t>(b.B) * b.T <= o.batch_tokens);
    for (int p : pairs_of(b)) order.push_back(p);
  }
  std::vector<int> expected(250);
  for (int i = 0; i < 250; ++i) expected[static_cast<size_t>(i)] = i;
  CHECK(order == expected);
  // Greedy: each batch would break the bound with the next pair added.
  for (size_t k = 0; k + 1 < batches.size(); ++k) {
    const Batch& b = batches[k];
    const int next = pairs_of(batches[k + 1])[0];
    const int64_t S = std::max(b.S, corpus.source_length(static_cast<size_t>(next)));
    const int64_t T = std::max(b.T, corpus.target_length(static_cast<size_t>(next)) + 1);
    CHECK(((b.B + 1) * S > o.batch_tokens || (b.B + 1) * T > o.batch_tokens));
  }
  CHECK(Batcher::in_order(ParallelCorpus::from_ids({}, {}), o).empty());
}

TEST_CASE("an empty corpus or a zero token bound is refused", "[train][batcher]") {
  auto empty = ParallelCorpus::from_ids({}, {});
  CHECK_THROWS_AS(Batcher(empty, BatcherOptions{}), tt::Error);
  auto corpus = random_corpus(10, 5);
  BatcherOptions o;
  o.batch_tokens = 0;
  CHECK_THROWS_AS(Batcher(corpus, o), tt::ConfigError);
  CHECK_THROWS_AS(Batcher::in_order(corpus, o), tt::ConfigError);
}

TEST_CASE("weighted corpora: each epoch draws pairs in proportion to the weights, resumable", "[train][batcher]") {
  // Corpus 1: pairs 0..199, corpus 2: pairs 200..249, weights 1 and 4 -> 50 and 200 pairs an epoch: 1/4 of
  // corpus 1 (a different quarter each epoch), corpus 2 four times over.
  auto corpus = random_corpus(250, 20);
  BatcherOptions o;
  o.batch_tokens = 80;
  o.seed = 5;
  const tt::train::CorpusMix mix{{0, 200, 1.0}, {200, 50, 4.0}};
  CHECK(tt::train::drawn_per_epoch(mix) == std::vector<int64_t>{50, 200});
  Batcher batcher(corpus, o, mix);
  std::vector<int> seen_first(200, 0);
  for (int epoch = 0; epoch < 8; ++epoch) {
    std::vector<int> count(250, 0);
    const int64_t nb = batcher.batches_per_epoch();
    for (int64_t b = 0; b < nb; ++b) {
      const Batch batch = batcher.next();
      check_layout(batch, corpus, o);
      for (int p : pairs_of(batch)) ++count[static_cast<size_t>(p)];
    }
    CHECK(batcher.position() == BatchPosition{epoch + 1, 0});
    int first = 0;
    for (int p = 0; p < 200; ++p) {
      CHECK(count[static_cast<size_t>(p)] <= 1);  // no pair of corpus 1 twice in an epoch
      first += count[static_cast<size_t>(p)];
      seen_first[static_cast<size_t>(p)] += count[static_cast<size_t>(p)];
    }
    CHECK(first == 50);
    for (int p = 200; p < 250; ++p) CHECK(count[static_cast<size_t>(p)] == 4);
  }
  // Over 8 epochs, 400 draws from 200 pairs: each pair twice on average, and the draws change by epoch.
  const auto [least, most] = std::minmax_element(seen_first.begin(), seen_first.end());
  CHECK(*most <= 8);
  CHECK(std::count(seen_first.begin(), seen_first.end(), 0) < 40);  // (200 * (3/4)^8 ~ 20 expected)
  // Seeking to any position continues exactly as going on does.
  Batcher straight(corpus, o, mix);
  take(straight, 3 * straight.batches_per_epoch() + 5);
  const BatchPosition saved = straight.position();
  const auto expected = take(straight, 40);
  Batcher resumed(corpus, o, mix);
  resumed.seek(saved);
  CHECK(take(resumed, 40) == expected);
  // A weight of 0 leaves a corpus out; negative or all-zero weights are refused.
  Batcher only_second(corpus, o, {{0, 200, 0.0}, {200, 50, 1.0}});
  for (int p : pairs_of(only_second.next())) CHECK(p >= 200);
  CHECK_THROWS_AS(Batcher(corpus, o, {{0, 200, -1.0}, {200, 50, 1.0}}), tt::ConfigError);
  CHECK_THROWS_AS(Batcher(corpus, o, {{0, 200, 0.0}, {200, 50, 0.0}}), tt::ConfigError);
}

TEST_CASE("a mix of one corpus with weight 1 plans as no mix would (one pair once an epoch)", "[train][batcher]") {
  auto corpus = random_corpus(120, 20);
  BatcherOptions o;
  o.batch_tokens = 60;
  Batcher plain(corpus, o), mixed(corpus, o, {{0, 120, 1.0}});
  CHECK(plain.batches_per_epoch() == mixed.batches_per_epoch());
  CHECK(plain.padding_fraction() == mixed.padding_fraction());
  std::multiset<int> a, b;
  for (int64_t k = 0; k < plain.batches_per_epoch(); ++k) {
    for (int p : pairs_of(plain.next())) a.insert(p);
    for (int p : pairs_of(mixed.next())) b.insert(p);
  }
  CHECK(a == b);
  CHECK(a.size() == 120);
}

namespace {

// Stands in for subword sampling: epoch e's corpus is corpora[e % 2], the same pairs with other lengths.
struct AlternatingCorpora : tt::train::EpochCorpora {
  std::vector<ParallelCorpus> corpora{random_corpus(300, 25, 2), random_corpus(300, 30, 3)};
  std::vector<int64_t> asked;
  const ParallelCorpus& at(int64_t epoch) override {
    asked.push_back(epoch);
    return corpora[static_cast<size_t>(epoch % 2)];
  }
};

}  // namespace

TEST_CASE("segmentations sampled per epoch: each epoch is planned on its own lengths, resumable", "[train][batcher]") {
  const ParallelCorpus best = random_corpus(300, 25, 1);
  BatcherOptions o;
  o.batch_tokens = 90;
  o.seed = 4;
  AlternatingCorpora epochs;
  Batcher batcher(best, o, {}, &epochs);
  CHECK(batcher.padding_fraction() == Batcher(best, o).padding_fraction());  // the statistics: the best's
  for (int64_t epoch = 0; epoch < 4; ++epoch) {
    INFO("epoch " << epoch);
    const ParallelCorpus& corpus = epochs.corpora[static_cast<size_t>(epoch % 2)];
    std::vector<int> seen(300, 0);
    for (int64_t k = 0; batcher.position().epoch == epoch; ++k) {
      const Batch b = batcher.next();
      if (k == 0) CHECK(batcher.batches_per_epoch() == Batcher(corpus, o).batches_per_epoch());
      check_layout(b, corpus, o);  // the rows hold this epoch's segmentation
      CHECK(static_cast<int64_t>(b.B) * b.S <= o.batch_tokens);
      CHECK(static_cast<int64_t>(b.B) * b.T <= o.batch_tokens);
      for (int p : pairs_of(b)) ++seen[static_cast<size_t>(p)];
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  }
  CHECK(epochs.asked == std::vector<int64_t>{0, 1, 2, 3, 4});  // each epoch once, in order
  // Seeking mid-epoch continues exactly as going on does, asking only for the epochs it needs.
  AlternatingCorpora straight_epochs, resumed_epochs;
  Batcher straight(best, o, {}, &straight_epochs);
  while (straight.position().epoch == 0) straight.next();
  take(straight, 7);
  const BatchPosition saved = straight.position();
  REQUIRE(saved == BatchPosition{1, 7});
  const auto expected = take(straight, 40);
  Batcher resumed(best, o, {}, &resumed_epochs);
  resumed.seek(saved);
  CHECK(resumed_epochs.asked.front() == saved.epoch);
  CHECK(take(resumed, 40) == expected);
}
