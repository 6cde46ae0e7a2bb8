// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): a counter-based
// RNG, so random number i of stream s under seed k is a pure function of (k, s, i) — the same on any
// thread count and on any device. Header-only so CUDA kernels can use it too.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define TT_HOST_DEVICE __host__ __device__
#else
#define TT_HOST_DEVICE
#endif

namespace tt::util {

struct Philox4 {
  uint32_t v[4];
};

TT_HOST_DEVICE inline uint32_t mulhilo(uint32_t a, uint32_t b, uint32_t* hi) {
  uint64_t p = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(p >> 32);
  return static_cast<uint32_t>(p);
}

// Four 32-bit random words for counter (c0..c3) under key (k0, k1).
TT_HOST_DEVICE inline Philox4 philox4x32(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0,
                                         uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, hi1;
    uint32_t lo0 = mulhilo(0xD2511F53u, c0, &hi0);
    uint32_t lo1 = mulhilo(0xCD9E8D57u, c2, &hi1);
    uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return Philox4{{c0, c1, c2, c3}};
}

// Uniform float in [0, 1) from a 32-bit word (24 significant bits, exact in float).
TT_HOST_DEVICE inline float uniform01(uint32_t x) { return static_cast<float>(x >> 8) * (1.0f / 16777216.0f); }

// Element i of stream `stream` under `seed`: one Philox call yields four values, for i = 4j .. 4j+3.
TT_HOST_DEVICE inline float philox_uniform(uint64_t seed, uint64_t stream, uint64_t i) {
  uint64_t block = i >> 2;
  Philox4 r = philox4x32(static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32),
                         static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32),
                         static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  return uniform01(r.v[i & 3]);
}

// Dropout's rule, the same on every device: element i of a mask is kept iff its 16-bit draw is at least
// dropout_threshold(p). One Philox call yields the draws of elements 8j .. 8j+7 (word k holds elements
// 8j + 2k in its low half and 8j + 2k + 1 in its high one): half the generator's work of a 32-bit uniform
// per element, which was most of the cost of dropout. p counts in steps of 1/65536 (0.1 drops 6554 of
// every 65536 draws: 0.100006), far below what changes training.
//
// The words of block j (elements 8j .. 8j+7), and element 8j + k's draw among them.
TT_HOST_DEVICE inline Philox4 dropout_block(uint64_t seed, uint64_t stream, uint64_t block) {
  return philox4x32(static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32),
                    static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32),
                    static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}
TT_HOST_DEVICE inline uint32_t dropout_half(const Philox4& words, int k) {
  return (words.v[k >> 1] >> (16 * (k & 1))) & 0xFFFFu;
}
TT_HOST_DEVICE inline uint32_t dropout_draw(uint64_t seed, uint64_t stream, uint64_t i) {
  return dropout_half(dropout_block(seed, stream, i >> 3), static_cast<int>(i & 7));
}
TT_HOST_DEVICE inline uint32_t dropout_threshold(float p) {
  if (!(p > 0.0f)) return 0;  // also NaN: nothing dropped (callers validate p)
  if (p >= 1.0f) return 65536;  // every draw is below: nothing kept
  return static_cast<uint32_t>(p * 65536.0f + 0.5f);
}
TT_HOST_DEVICE inline bool dropout_keep(uint64_t seed, uint64_t stream, uint64_t i, float p) {
  return dropout_draw(seed, stream, i) >= dropout_threshold(p);
}

// Stream ids: one per (purpose, step, site) so that masks never repeat across steps or layers.
enum class RngPurpose : uint64_t { init = 1, shuffle = 2, dropout = 3, sampling = 4, decoding = 5, segmentation = 6 };

TT_HOST_DEVICE inline uint64_t rng_stream(RngPurpose purpose, uint64_t step, uint32_t site) {
  return (static_cast<uint64_t>(purpose) << 60) ^ (step << 20) ^ site;
}

// SplitMix64's finaliser: a bijection of 64-bit words with mix64(0) = 0.
TT_HOST_DEVICE inline uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The stream of (purpose, step, site) for batch `batch` of the step, counted over the whole step (all
// ranks of a data-parallel run), so a mask never depends on how the step's batches are spread over
// processes. Batch 0 is rng_stream(purpose, step, site); other batches move the stream by a hash of the
// index (a clash with another (step, site) needs a 64-bit coincidence).
TT_HOST_DEVICE inline uint64_t rng_stream(RngPurpose purpose, uint64_t step, uint32_t site, uint64_t batch) {
  return rng_stream(purpose, step, site) ^ mix64(batch);
}

}  // namespace tt::util
