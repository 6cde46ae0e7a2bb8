// A per-segment open-addressing table of hypothesis n-grams, for matching references against them in
// linear time (the sort-based counts in ngram_counts.h are the general fallback). Keys are exact packed
// n-grams plus their order, so there is no hashing error: equal keys are equal n-grams.
#pragma once

#include <cstdint>
#include <vector>

#include "metrics/ngram_counts.h"

namespace tt::metrics {

class NgramTable {
 public:
  struct Slot {
    NgramKey key;
    uint32_t order = 0;  // 0 = empty
    uint32_t hyp = 0;    // count in the hypothesis
    uint32_t ref = 0;    // count in the current reference
    uint32_t ref_max = 0;
    uint32_t stamp = 0;  // which reference `ref` belongs to
  };

  // Empties the table, sized for about `expected` distinct n-grams.
  void reset(size_t expected);
  // Counts a hypothesis n-gram.
  void add_hyp(const NgramKey& key, uint32_t order);
  // Counts a reference n-gram for reference number `ref` (1-based); n-grams absent from the hypothesis
  // are ignored. Returns the slot or nullptr.
  Slot* add_ref(const NgramKey& key, uint32_t order, uint32_t ref);

  const std::vector<uint32_t>& used() const { return used_; }
  Slot& slot(uint32_t index) { return slots_[index]; }

 private:
  uint32_t find(const NgramKey& key, uint32_t order) const;
  std::vector<Slot> slots_;
  std::vector<uint32_t> used_;
  uint32_t mask_ = 0;
};

// Packed n-grams of `seq` of orders 1..max_order starting at each position: calls f(key, order).
// Requires max_order * bits <= 128 and bits in 1..32.
template <typename F>
void for_each_ngram(const uint32_t* seq, size_t len, int max_order, int bits, F&& f) {
  for (size_t i = 0; i < len; ++i) {
    NgramKey k;
    for (int n = 1; n <= max_order && i + n <= len; ++n) {
      k.hi = (k.hi << bits) | (k.lo >> (64 - bits));
      k.lo = (k.lo << bits) | seq[i + n - 1];
      f(k, static_cast<uint32_t>(n));
    }
  }
}

}  // namespace tt::metrics
