#include "metrics/ngram_counts.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>

namespace tt::metrics {

static void run_length(std::vector<NgramKey>& keys, NgramCounts& out) {
  std::sort(keys.begin(), keys.end());
  out.clear();
  for (size_t i = 0; i < keys.size();) {
    size_t j = i + 1;
    while (j < keys.size() && keys[j] == keys[i]) ++j;
    out.push_back({keys[i], static_cast<uint32_t>(j - i)});
    i = j;
  }
}

// Packs seq[i .. i+n) into a key, `bits` per symbol.
static NgramKey pack(const uint32_t* seq, int n, int bits) {
  NgramKey k;
  for (int t = 0; t < n; ++t) {
    // shift the 128-bit value left by `bits`, then or in the symbol
    k.hi = (k.hi << bits) | (k.lo >> (64 - bits));  // bits is 1..32
    k.lo = (k.lo << bits) | seq[t];
  }
  return k;
}

void count_ngrams(const std::vector<std::vector<uint32_t>>& sequences, int n, int bits,
                  std::vector<NgramCounts>& out) {
  out.resize(sequences.size());
  std::vector<NgramKey> keys;
  if (n * bits <= 128) {
    for (size_t s = 0; s < sequences.size(); ++s) {
      const auto& seq = sequences[s];
      keys.clear();
      if (seq.size() >= static_cast<size_t>(n)) {
        for (size_t i = 0; i + n <= seq.size(); ++i) keys.push_back(pack(seq.data() + i, n, bits));
      }
      run_length(keys, out[s]);
    }
    return;
  }
  // Joint ranking: sort all (sequence, position) pairs lexicographically by their n-gram.
  struct Ref {
    uint32_t seq;
    uint32_t pos;
  };
  std::vector<Ref> refs;
  for (size_t s = 0; s < sequences.size(); ++s) {
    for (size_t i = 0; i + n <= sequences[s].size(); ++i) refs.push_back({uint32_t(s), uint32_t(i)});
  }
  auto begin_of = [&](const Ref& r) { return sequences[r.seq].data() + r.pos; };
  std::sort(refs.begin(), refs.end(), [&](const Ref& a, const Ref& b) {
    return std::lexicographical_compare(begin_of(a), begin_of(a) + n, begin_of(b), begin_of(b) + n);
  });
  std::vector<std::vector<NgramKey>> per_seq(sequences.size());
  uint64_t rank = 0;
  for (size_t i = 0; i < refs.size(); ++i) {
    if (i > 0 && !std::equal(begin_of(refs[i - 1]), begin_of(refs[i - 1]) + n, begin_of(refs[i]))) ++rank;
    per_seq[refs[i].seq].push_back({0, rank});
  }
  for (size_t s = 0; s < sequences.size(); ++s) run_length(per_seq[s], out[s]);
}

uint64_t total_count(const NgramCounts& counts) {
  uint64_t sum = 0;
  for (const auto& c : counts) sum += c.count;
  return sum;
}

uint64_t clipped_matches(const NgramCounts& hyp, const NgramCounts& ref) {
  uint64_t matches = 0;
  size_t i = 0, j = 0;
  while (i < hyp.size() && j < ref.size()) {
    if (hyp[i].key < ref[j].key) {
      ++i;
    } else if (ref[j].key < hyp[i].key) {
      ++j;
    } else {
      matches += std::min(hyp[i].count, ref[j].count);
      ++i;
      ++j;
    }
  }
  return matches;
}

void merge_max(NgramCounts& acc, const NgramCounts& other) {
  NgramCounts merged;
  merged.reserve(acc.size() + other.size());
  size_t i = 0, j = 0;
  while (i < acc.size() || j < other.size()) {
    if (j == other.size() || (i < acc.size() && acc[i].key < other[j].key)) {
      merged.push_back(acc[i++]);
    } else if (i == acc.size() || other[j].key < acc[i].key) {
      merged.push_back(other[j++]);
    } else {
      merged.push_back({acc[i].key, std::max(acc[i].count, other[j].count)});
      ++i;
      ++j;
    }
  }
  acc.swap(merged);
}

// A fast hash for short tokens (8 bytes at a time); equal hashes are always confirmed by comparison.
static inline uint64_t token_hash(std::string_view s) {
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 31;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, s.data() + i, s.size() - i);
  h = (h ^ tail) * 0x94D049BB133111EBULL;
  return h ^ (h >> 29);
}

uint32_t assign_ids(const std::vector<std::string_view>& tokens, std::vector<uint32_t>& ids) {
  // Open addressing over token indices; equal hashes are confirmed by comparing the strings.
  size_t capacity = 16;
  while (capacity < tokens.size() * 2) capacity *= 2;
  const size_t mask = capacity - 1;
  std::vector<uint32_t> slots(capacity, UINT32_MAX);  // token index of the first occurrence
  std::vector<size_t> hashes(tokens.size());
  ids.assign(tokens.size(), 0);
  uint32_t next = 0;
  for (size_t k = 0; k < tokens.size(); ++k) {
    size_t h = token_hash(tokens[k]);
    hashes[k] = h;
    size_t index = h & mask;
    while (true) {
      uint32_t first = slots[index];
      if (first == UINT32_MAX) {
        slots[index] = static_cast<uint32_t>(k);
        ids[k] = next++;
        break;
      }
      if (hashes[first] == h && tokens[first] == tokens[k]) {
        ids[k] = ids[first];
        break;
      }
      index = (index + 1) & mask;
    }
  }
  return next;
}

uint32_t remap_symbols(std::vector<std::vector<uint32_t>>& sequences) {
  size_t total = 0;
  for (const auto& seq : sequences) total += seq.size();
  size_t capacity = 16;
  while (capacity < total * 2) capacity *= 2;
  const size_t mask = capacity - 1;
  std::vector<uint32_t> keys(capacity, UINT32_MAX), values(capacity);
  uint32_t next = 0;
  for (auto& seq : sequences) {
    for (auto& symbol : seq) {
      size_t index = (symbol * 0x9E3779B1u) & mask;
      while (keys[index] != UINT32_MAX && keys[index] != symbol) index = (index + 1) & mask;
      if (keys[index] == UINT32_MAX) {
        keys[index] = symbol;
        values[index] = next++;
      }
      symbol = values[index];
    }
  }
  return next;
}

int bits_for(uint32_t distinct) {
  int bits = 1;
  while (bits < 32 && (uint64_t{1} << bits) < distinct) ++bits;
  return bits;
}

}  // namespace tt::metrics
