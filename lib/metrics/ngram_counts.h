// Exact n-gram counting over symbol sequences (code points, or per-segment token ids) without strings or
// hashes in the hot loop: n-grams are packed into 128-bit keys, sorted and run-length counted. Keys are
// exact (no hashing), so counts are the same as Python's Counter over tuples.
#pragma once

#include <compare>
#include <cstdint>
#include <string_view>
#include <vector>

namespace tt::metrics {

struct NgramKey {
  uint64_t hi = 0;
  uint64_t lo = 0;
  auto operator<=>(const NgramKey&) const = default;
};

struct NgramCount {
  NgramKey key;
  uint32_t count;
};

// Sorted by key, one entry per distinct n-gram.
using NgramCounts = std::vector<NgramCount>;

// Counts of the n-grams of order `n` in each of `sequences`, with keys comparable across the sequences.
// Symbols below 2^bits are packed directly when n * bits <= 128; otherwise n-grams are ranked jointly
// over all sequences (slower, any order). `out` gets one NgramCounts per sequence.
void count_ngrams(const std::vector<std::vector<uint32_t>>& sequences, int n, int bits,
                  std::vector<NgramCounts>& out);

// Sum of counts.
uint64_t total_count(const NgramCounts& counts);

// Sum over common n-grams of min(hyp count, ref count): the clipped matches.
uint64_t clipped_matches(const NgramCounts& hyp, const NgramCounts& ref);

// acc[k] = max(acc[k], other[k]) for every key (n-gram counts merged across references).
void merge_max(NgramCounts& acc, const NgramCounts& other);

// Dense ids [0, distinct) for `tokens`: equal strings get equal ids. Returns the number of distinct tokens.
uint32_t assign_ids(const std::vector<std::string_view>& tokens, std::vector<uint32_t>& ids);

// Replaces the symbols of all sequences by dense ids [0, distinct) (equal symbols, equal ids).
// Returns the number of distinct symbols.
uint32_t remap_symbols(std::vector<std::vector<uint32_t>>& sequences);

// Number of bits needed for symbols in [0, distinct).
int bits_for(uint32_t distinct);

}  // namespace tt::metrics
