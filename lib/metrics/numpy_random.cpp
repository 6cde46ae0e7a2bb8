#include "metrics/numpy_random.h"

namespace tt::metrics {

namespace {

__extension__ typedef unsigned __int128 u128;

// numpy.random.SeedSequence(seed).generate_state(4, uint32 words) for a seed below 2^64.
std::vector<uint32_t> seed_sequence_state(uint64_t seed, size_t n_words) {
  constexpr uint32_t kInitA = 0x43b0d7e5, kMultA = 0x931e8875, kInitB = 0x8b51f9dd, kMultB = 0x58f38ded;
  constexpr uint32_t kMixMultL = 0xca01f9dd, kMixMultR = 0x4973f715;
  constexpr int kPoolSize = 4;
  std::vector<uint32_t> entropy;
  if (seed == 0) entropy.push_back(0);
  for (uint64_t s = seed; s > 0; s >>= 32) entropy.push_back(static_cast<uint32_t>(s));
  uint32_t hash_const = kInitA;
  auto hashmix = [&](uint32_t value) {
    value ^= hash_const;
    hash_const *= kMultA;
    value *= hash_const;
    value ^= value >> 16;
    return value;
  };
  auto mix = [](uint32_t x, uint32_t y) {
    uint32_t result = kMixMultL * x - kMixMultR * y;
    result ^= result >> 16;
    return result;
  };
  uint32_t pool[kPoolSize];
  for (int i = 0; i < kPoolSize; ++i) pool[i] = hashmix(i < static_cast<int>(entropy.size()) ? entropy[i] : 0);
  for (int src = 0; src < kPoolSize; ++src) {
    for (int dst = 0; dst < kPoolSize; ++dst) {
      if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src]));
    }
  }
  for (size_t src = kPoolSize; src < entropy.size(); ++src) {
    for (int dst = 0; dst < kPoolSize; ++dst) pool[dst] = mix(pool[dst], hashmix(entropy[src]));
  }
  std::vector<uint32_t> state(n_words);
  uint32_t hash_b = kInitB;
  for (size_t i = 0; i < n_words; ++i) {
    uint32_t value = pool[i % kPoolSize];
    value ^= hash_b;
    hash_b *= kMultB;
    value *= hash_b;
    value ^= value >> 16;
    state[i] = value;
  }
  return state;
}

const u128 kMultiplier = (static_cast<u128>(0x2360ED051FC65DA4ULL) << 64) | 0x4385DF649FCCF645ULL;

}  // namespace

void NumpyRandom::step() {
  u128 state = (static_cast<u128>(state_hi_) << 64) | state_lo_;
  u128 inc = (static_cast<u128>(inc_hi_) << 64) | inc_lo_;
  state = state * kMultiplier + inc;
  state_hi_ = static_cast<uint64_t>(state >> 64);
  state_lo_ = static_cast<uint64_t>(state);
}

NumpyRandom::NumpyRandom(uint64_t seed) {
  std::vector<uint32_t> words = seed_sequence_state(seed, 8);
  uint64_t v[4];
  for (int k = 0; k < 4; ++k) v[k] = static_cast<uint64_t>(words[2 * k]) | (static_cast<uint64_t>(words[2 * k + 1]) << 32);
  // pcg64_set_seed(seed = v[0]:v[1], inc = v[2]:v[3]) -> pcg_setseq_128_srandom_r
  u128 initstate = (static_cast<u128>(v[0]) << 64) | v[1];
  u128 initseq = (static_cast<u128>(v[2]) << 64) | v[3];
  u128 inc = (initseq << 1) | 1u;
  inc_hi_ = static_cast<uint64_t>(inc >> 64);
  inc_lo_ = static_cast<uint64_t>(inc);
  state_hi_ = state_lo_ = 0;
  step();
  u128 state = ((static_cast<u128>(state_hi_) << 64) | state_lo_) + initstate;
  state_hi_ = static_cast<uint64_t>(state >> 64);
  state_lo_ = static_cast<uint64_t>(state);
  step();
}

uint64_t NumpyRandom::next64() {
  step();
  uint64_t value = state_hi_ ^ state_lo_;
  unsigned rot = static_cast<unsigned>(state_hi_ >> 58);
  return (value >> rot) | (value << ((64 - rot) & 63));
}

uint32_t NumpyRandom::next32() {
  if (has_uint32_) {
    has_uint32_ = false;
    return uinteger_;
  }
  uint64_t next = next64();
  has_uint32_ = true;
  uinteger_ = static_cast<uint32_t>(next >> 32);
  return static_cast<uint32_t>(next & 0xFFFFFFFFu);
}

std::vector<uint32_t> NumpyRandom::integers(uint64_t n, size_t count) {
  std::vector<uint32_t> out(count, 0);
  if (n <= 1) return out;
  const uint64_t rng = n - 1;
  if (rng == 0xFFFFFFFFu) {
    for (auto& x : out) x = next32();
    return out;
  }
  const uint32_t rng_excl = static_cast<uint32_t>(rng + 1);
  for (auto& x : out) {
    uint64_t m = static_cast<uint64_t>(next32()) * rng_excl;
    uint32_t leftover = static_cast<uint32_t>(m);
    if (leftover < rng_excl) {
      const uint32_t threshold = static_cast<uint32_t>((0xFFFFFFFFu - rng) % rng_excl);
      while (leftover < threshold) {
        m = static_cast<uint64_t>(next32()) * rng_excl;
        leftover = static_cast<uint32_t>(m);
      }
    }
    x = static_cast<uint32_t>(m >> 32);
  }
  return out;
}

std::vector<uint8_t> NumpyRandom::booleans(size_t count) {
  std::vector<uint8_t> out(count);
  int bcnt = 0;
  uint32_t buf = 0;
  for (auto& x : out) {
    if (bcnt == 0) {
      buf = next32();
      bcnt = 31;
    } else {
      buf >>= 1;
      --bcnt;
    }
    x = buf & 1u;
  }
  return out;
}

}  // namespace tt::metrics
