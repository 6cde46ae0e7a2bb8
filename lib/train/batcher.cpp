#include "train/batcher.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "util/error.h"
#include "util/rng.h"

namespace tt::train {

namespace {

// Philox stream sites under RngPurpose::shuffle: the batch order, the equal-length pair exchange, and
// (2 + k) the pairs drawn from corpus k of a mix.
constexpr uint32_t batch_order_site = 0;
constexpr uint32_t pair_exchange_site = 1;
constexpr uint32_t mix_draw_site = 2;

int64_t source_slots(const data::ParallelCorpus& corpus, int64_t i) {
  return corpus.source_length(static_cast<size_t>(i));
}
// tgt_in = bos + target and tgt_out = target + eos: one more than the stored target.
int64_t target_slots(const data::ParallelCorpus& corpus, int64_t i) {
  return corpus.target_length(static_cast<size_t>(i)) + 1;
}

// Cuts `order` greedily into consecutive batches with B * S <= bound and B * T <= bound; a pair over the
// bound on its own becomes a batch of one. Returns the boundaries (first 0, last order.size()).
std::vector<int64_t> cut_batches(int64_t& oversize, const data::ParallelCorpus& corpus,
                                 const std::vector<int64_t>& order, int64_t bound) {
  std::vector<int64_t> begin{0};
  int64_t B = 0, S = 0, T = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const int64_t s = source_slots(corpus, order[k]), t = target_slots(corpus, order[k]);
    int64_t new_s = std::max(S, s), new_t = std::max(T, t);
    if (B > 0 && ((B + 1) * new_s > bound || (B + 1) * new_t > bound)) {
      begin.push_back(static_cast<int64_t>(k));
      B = 0;
      new_s = s;
      new_t = t;
    }
    ++B;
    S = new_s;
    T = new_t;
    if (B == 1 && (s > bound || t > bound)) ++oversize;
  }
  if (!order.empty()) begin.push_back(static_cast<int64_t>(order.size()));
  return begin;
}

nn::Batch make_batch(const data::ParallelCorpus& corpus, const int64_t* pairs, int64_t count,
                     const BatcherOptions& o) {
  nn::Batch b;
  b.B = static_cast<int>(count);
  b.pad_id = o.pad_id;
  for (int64_t r = 0; r < count; ++r) {
    b.S = std::max(b.S, static_cast<int>(source_slots(corpus, pairs[r])));
    b.T = std::max(b.T, static_cast<int>(target_slots(corpus, pairs[r])));
  }
  const size_t B = static_cast<size_t>(b.B), S = static_cast<size_t>(b.S), T = static_cast<size_t>(b.T);
  b.src.assign(B * S, o.pad_id);
  b.tgt_in.assign(B * T, o.pad_id);
  b.tgt_out.assign(B * T, o.pad_id);
  b.src_lengths.resize(B);
  b.tgt_lengths.resize(B);
  for (size_t r = 0; r < B; ++r) {
    const auto src = corpus.source(static_cast<size_t>(pairs[r]));
    const auto tgt = corpus.target(static_cast<size_t>(pairs[r]));
    std::copy(src.begin(), src.end(), b.src.begin() + static_cast<std::ptrdiff_t>(r * S));
    b.tgt_in[r * T] = o.bos_id;
    std::copy(tgt.begin(), tgt.end(), b.tgt_in.begin() + static_cast<std::ptrdiff_t>(r * T + 1));
    std::copy(tgt.begin(), tgt.end(), b.tgt_out.begin() + static_cast<std::ptrdiff_t>(r * T));
    b.tgt_out[r * T + tgt.size()] = o.eos_id;
    b.src_lengths[r] = static_cast<int32_t>(src.size());
    b.tgt_lengths[r] = static_cast<int32_t>(tgt.size() + 1);
  }
  return b;
}

// Uniform integer in [0, n) for draw `i` of `stream`: 64 random bits keep the modulo bias below 2^-24.
uint64_t draw_below(uint64_t seed, uint64_t stream, uint64_t i, uint64_t n) {
  util::Philox4 r = util::philox4x32(static_cast<uint32_t>(i), static_cast<uint32_t>(i >> 32),
                                     static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32),
                                     static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  return ((static_cast<uint64_t>(r.v[0]) << 32) | r.v[1]) % n;
}

// Fisher-Yates over [first, last), drawing from `stream` starting at `counter` (advanced).
void shuffle(int64_t* first, int64_t* last, uint64_t seed, uint64_t stream, uint64_t& counter) {
  for (int64_t n = last - first; n > 1; --n) {
    std::swap(first[n - 1], first[draw_below(seed, stream, counter++, static_cast<uint64_t>(n))]);
  }
}

void check_options(const BatcherOptions& o) {
  if (o.batch_tokens < 1 || o.batch_tokens > std::numeric_limits<int32_t>::max()) {
    throw ConfigError("the batch size in tokens must be between 1 and 2^31-1, got " + std::to_string(o.batch_tokens));
  }
}

}  // namespace

void check_corpus_weights(const std::vector<double>& weights) {
  bool any = false;
  for (double w : weights) {
    if (!(w >= 0) || !std::isfinite(w))
      throw ConfigError(option_ref("corpus_weights") + ": a weight must be a number >= 0, got " + std::to_string(w));
    any = any || w > 0;
  }
  if (!any) throw ConfigError(option_ref("corpus_weights") + ": at least one weight must be above 0");
}

std::vector<int64_t> drawn_per_epoch(const CorpusMix& mix) {
  double total = 0, weights = 0;
  std::vector<double> each;
  for (const CorpusShare& c : mix) {
    total += static_cast<double>(c.size);
    weights += c.weight;
    each.push_back(c.weight);
  }
  check_corpus_weights(each);
  std::vector<int64_t> drawn;
  for (const CorpusShare& c : mix) drawn.push_back(c.size == 0 ? 0 : std::llround(total * c.weight / weights));
  return drawn;
}

Batcher::Batcher(const data::ParallelCorpus& corpus, const BatcherOptions& options, CorpusMix mix,
                 EpochCorpora* epochs)
    : corpus_(&corpus), options_(options), mix_(std::move(mix)), epochs_(epochs) {
  check_options(options_);
  const int64_t n = static_cast<int64_t>(corpus.size());
  if (n == 0) {
    throw Error("cannot make training batches from an empty corpus",
                "the files are empty or the length filters dropped every pair; check the corpus statistics");
  }
  if (!mix_.empty()) {
    int64_t end = 0;
    for (const CorpusShare& c : mix_) end = std::max(end, c.begin + c.size);
    if (end > n) throw InternalError("corpus mix beyond the corpus");
    int64_t drawn = 0;
    for (int64_t d : drawn_per_epoch(mix_)) drawn += d;
    if (drawn == 0) throw ConfigError(option_ref("corpus_weights") + ": the weights draw no pair from the corpora");
  }
  oversize_pairs_ = plan(pairs_of(0));
  for (size_t b = 0; b + 1 < batch_begin_.size(); ++b) {
    int64_t S = 0, T = 0, sum_s = 0, sum_t = 0;
    const int64_t B = batch_begin_[b + 1] - batch_begin_[b];
    for (int64_t k = batch_begin_[b]; k < batch_begin_[b + 1]; ++k) {
      const int64_t s = source_slots(corpus, sorted_[static_cast<size_t>(k)]);
      const int64_t t = target_slots(corpus, sorted_[static_cast<size_t>(k)]);
      S = std::max(S, s);
      T = std::max(T, t);
      sum_s += s;
      sum_t += t;
    }
    padded_slots_ += B * S - sum_s + B * T - sum_t;
    all_slots_ += B * S + B * T;
  }
}

std::vector<int64_t> Batcher::pairs_of(int64_t epoch) const {
  if (!mix_.empty()) return draw(epoch);
  std::vector<int64_t> pairs(corpus_->size());
  std::iota(pairs.begin(), pairs.end(), int64_t{0});
  return pairs;
}

std::vector<int64_t> Batcher::draw(int64_t epoch) const {
  const std::vector<int64_t> drawn = drawn_per_epoch(mix_);
  std::vector<int64_t> pairs, order;
  for (size_t k = 0; k < mix_.size(); ++k) {
    const CorpusShare& c = mix_[k];
    if (c.size == 0) continue;
    for (int64_t pass = 0; pass < drawn[k] / c.size; ++pass)
      for (int64_t i = 0; i < c.size; ++i) pairs.push_back(c.begin + i);
    const int64_t rest = drawn[k] % c.size;
    if (rest == 0) continue;
    order.resize(static_cast<size_t>(c.size));
    std::iota(order.begin(), order.end(), c.begin);
    uint64_t counter = 0;
    shuffle(order.data(), order.data() + order.size(), options_.seed,
            util::rng_stream(util::RngPurpose::shuffle, static_cast<uint64_t>(epoch),
                             mix_draw_site + static_cast<uint32_t>(k)),
            counter);
    pairs.insert(pairs.end(), order.begin(), order.begin() + rest);
  }
  return pairs;
}

int64_t Batcher::plan(std::vector<int64_t> pairs) {
  const data::ParallelCorpus& corpus = *corpus_;
  sorted_ = std::move(pairs);
  std::sort(sorted_.begin(), sorted_.end(), [&](int64_t a, int64_t b) {
    const int64_t ta = target_slots(corpus, a), tb = target_slots(corpus, b);
    if (ta != tb) return ta < tb;
    const int64_t sa = source_slots(corpus, a), sb = source_slots(corpus, b);
    if (sa != sb) return sa < sb;
    return a < b;
  });
  int64_t oversize = 0;
  batch_begin_ = cut_batches(oversize, corpus, sorted_, options_.batch_tokens);
  group_begin_.clear();
  for (size_t k = 0; k < sorted_.size(); ++k) {
    if (k == 0 || source_slots(corpus, sorted_[k]) != source_slots(corpus, sorted_[k - 1]) ||
        target_slots(corpus, sorted_[k]) != target_slots(corpus, sorted_[k - 1])) {
      group_begin_.push_back(static_cast<int64_t>(k));
    }
  }
  group_begin_.push_back(static_cast<int64_t>(sorted_.size()));
  return oversize;
}

void Batcher::prepare_epoch(int64_t epoch) {
  const uint64_t e = static_cast<uint64_t>(epoch);
  if (epochs_) {
    const size_t pairs = corpus_->size();
    corpus_ = &epochs_->at(epoch);
    if (corpus_->size() != pairs)
      throw InternalError("epoch " + std::to_string(epoch) + "'s corpus has " + std::to_string(corpus_->size()) +
                          " pairs, not " + std::to_string(pairs));
  }
  if (plans_each_epoch()) plan(pairs_of(epoch));
  plan_ = sorted_;
  uint64_t counter = 0;
  const uint64_t exchange_stream = util::rng_stream(util::RngPurpose::shuffle, e, pair_exchange_site);
  for (size_t g = 0; g + 1 < group_begin_.size(); ++g) {
    shuffle(plan_.data() + group_begin_[g], plan_.data() + group_begin_[g + 1], options_.seed, exchange_stream,
            counter);
  }
  batch_order_.resize(static_cast<size_t>(batches_per_epoch()));
  std::iota(batch_order_.begin(), batch_order_.end(), int64_t{0});
  counter = 0;
  shuffle(batch_order_.data(), batch_order_.data() + batch_order_.size(), options_.seed,
          util::rng_stream(util::RngPurpose::shuffle, e, batch_order_site), counter);
  prepared_epoch_ = epoch;
}

nn::Batch Batcher::next() {
  if (prepared_epoch_ != position_.epoch) prepare_epoch(position_.epoch);
  const int64_t b = batch_order_[static_cast<size_t>(position_.index)];
  nn::Batch batch = make_batch(*corpus_, plan_.data() + batch_begin_[static_cast<size_t>(b)],
                               batch_begin_[static_cast<size_t>(b) + 1] - batch_begin_[static_cast<size_t>(b)],
                               options_);
  if (++position_.index == batches_per_epoch()) {
    ++position_.epoch;
    position_.index = 0;
    if (plans_each_epoch()) prepare_epoch(position_.epoch);  // batches_per_epoch() is the new epoch's
  }
  return batch;
}

void Batcher::seek(BatchPosition position) {
  if (plans_each_epoch() && position.epoch >= 0 && prepared_epoch_ != position.epoch) prepare_epoch(position.epoch);
  if (position.epoch < 0 || position.index < 0 || position.index >= batches_per_epoch()) {
    throw Error("cannot resume the batch order at epoch " + std::to_string(position.epoch) + ", batch " +
                    std::to_string(position.index) + ": an epoch has " + std::to_string(batches_per_epoch()) +
                    " batches",
                "the saved position belongs to a different corpus or batch size; resume with the same data "
                "and batch options");
  }
  position_ = position;
}

double Batcher::padding_fraction() const {
  return all_slots_ == 0 ? 0.0 : static_cast<double>(padded_slots_) / static_cast<double>(all_slots_);
}

std::vector<nn::Batch> Batcher::in_order(const data::ParallelCorpus& corpus, const BatcherOptions& options) {
  check_options(options);
  std::vector<int64_t> order(corpus.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  int64_t oversize = 0;
  const std::vector<int64_t> begin = cut_batches(oversize, corpus, order, options.batch_tokens);
  std::vector<nn::Batch> batches;
  for (size_t b = 0; b + 1 < begin.size(); ++b) {
    batches.push_back(make_batch(corpus, order.data() + begin[b], begin[b + 1] - begin[b], options));
  }
  return batches;
}

}  // namespace tt::train
