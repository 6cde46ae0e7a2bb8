// A per-segment open-addressing table of hypothesis n-grams, for matching references against them in
// linear time (the sort-based counts in ngram_counts.h are the general fallback). A key packs the
// n-gram's segment-local symbol ids and its order (low 4 bits) exactly into 64 bits, so equal keys are
// equal n-grams: no hashing error is possible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tt::metrics {

class NgramTable {
 public:
  struct Slot {
    uint64_t key = 0;  // 0 = empty (a real key has a non-zero order tag)
    uint32_t hyp = 0;  // count in the hypothesis
    uint32_t ref = 0;  // count in the current reference
    uint32_t ref_max = 0;
    uint32_t stamp = 0;  // which reference `ref` belongs to
  };

  // True when n-grams up to `max_order` (tag included) of symbols below 2^bits fit a key.
  static bool fits(int max_order, int bits) { return max_order <= 15 && max_order * bits <= 60; }

  // Empties the table, sized for about `expected` distinct n-grams.
  void reset(size_t expected);
  void add_hyp(uint64_t key);
  // Counts a reference n-gram for reference number `ref` (1-based); n-grams absent from the hypothesis
  // are ignored. Returns the slot or nullptr.
  Slot* add_ref(uint64_t key, uint32_t ref);

  const std::vector<uint32_t>& used() const { return used_; }
  const Slot& slot(uint32_t index) const { return slots_[index]; }

 private:
  uint32_t find(uint64_t key) const;
  std::vector<Slot> slots_;
  std::vector<uint32_t> used_;
  uint32_t mask_ = 0;
};

// The packed n-grams of seq[0..len) of orders 1..max_order (tagged first_tag, first_tag+1, ...) at each
// start position: calls f(key, order). Requires NgramTable::fits(first_tag + max_order - 1, bits).
template <typename F>
void for_each_ngram(const uint32_t* seq, size_t len, int max_order, int bits, uint32_t first_tag, F&& f) {
  for (size_t i = 0; i < len; ++i) {
    uint64_t packed = 0;
    for (int n = 1; n <= max_order && i + n <= len; ++n) {
      packed = (packed << bits) | seq[i + n - 1];
      f((packed << 4) | (first_tag + n - 1), static_cast<uint32_t>(n));
    }
  }
}

}  // namespace tt::metrics
