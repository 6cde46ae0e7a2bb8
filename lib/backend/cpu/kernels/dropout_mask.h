// The dropout mask words (Philox4x32-10, util/rng.h) for a run of flat element indices, vectorised with
// AVX2 where the variant has it. Shared by the dropout kernels and the fused ones that drop in place
// (fused attention); internal linkage, so each instruction-set variant has its own copy.
#pragma once

#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "backend/cpu/kernels/kernel_functions.h"
#include "util/rng.h"

namespace tt::backend::cpu::TT_CPU_ISA {
namespace {

constexpr int kChunk = 1024;  // elements per mask piece (a stack buffer of Philox words)

#if defined(__AVX2__)
// 32x32->64 multiply of 8 lanes, split into low and high words (AVX2 has no unsigned mulhi for 32 bits).
inline void mulhilo8(__m256i a, __m256i m, __m256i* lo, __m256i* hi) {
  __m256i even = _mm256_mul_epu32(a, m);                         // lanes 0, 2, 4, 6 as 64-bit products
  __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);   // lanes 1, 3, 5, 7
  *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

// Philox4x32-10 of kGroups x 8 consecutive blocks starting at `block`, stored in element order (4 words
// per block). The groups are independent, so their multiply chains overlap: one group alone is bound
// by the latency of each round (multiply, shift, blend, xor in a chain); two run ~1.2x faster.
constexpr int kGroups = 2;
inline void philox_groups(uint32_t* out, uint64_t block, uint32_t s_lo, uint32_t s_hi, uint32_t k0, uint32_t k1) {
  alignas(32) uint32_t lo[8 * kGroups], hi[8 * kGroups];
  for (int l = 0; l < 8 * kGroups; ++l) {
    lo[l] = static_cast<uint32_t>(block + l);
    hi[l] = static_cast<uint32_t>((block + l) >> 32);
  }
  __m256i c0[kGroups], c1[kGroups], c2[kGroups], c3[kGroups];
  for (int g = 0; g < kGroups; ++g) {
    c0[g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo + 8 * g));
    c1[g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi + 8 * g));
    c2[g] = _mm256_set1_epi32(static_cast<int>(s_lo));
    c3[g] = _mm256_set1_epi32(static_cast<int>(s_hi));
  }
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(0xD2511F53u));
  const __m256i m1 = _mm256_set1_epi32(static_cast<int>(0xCD9E8D57u));
  for (int round = 0; round < 10; ++round) {
    const __m256i vk0 = _mm256_set1_epi32(static_cast<int>(k0)), vk1 = _mm256_set1_epi32(static_cast<int>(k1));
    for (int g = 0; g < kGroups; ++g) {
      __m256i lo0, hi0, lo1, hi1;
      mulhilo8(c0[g], m0, &lo0, &hi0);
      mulhilo8(c2[g], m1, &lo1, &hi1);
      c0[g] = _mm256_xor_si256(_mm256_xor_si256(hi1, c1[g]), vk0);
      c2[g] = _mm256_xor_si256(_mm256_xor_si256(hi0, c3[g]), vk1);
      c1[g] = lo1;
      c3[g] = lo0;
    }
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  for (int g = 0; g < kGroups; ++g) {
    // Transpose 4 words x 8 blocks into block order.
    __m256i t0 = _mm256_unpacklo_epi32(c0[g], c1[g]), t1 = _mm256_unpackhi_epi32(c0[g], c1[g]);
    __m256i t2 = _mm256_unpacklo_epi32(c2[g], c3[g]), t3 = _mm256_unpackhi_epi32(c2[g], c3[g]);
    __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
    __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
    auto* o = reinterpret_cast<__m256i*>(out + 32 * g);
    _mm256_storeu_si256(o + 0, _mm256_permute2x128_si256(u0, u1, 0x20));
    _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(u2, u3, 0x20));
    _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(u0, u1, 0x31));
    _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(u2, u3, 0x31));
  }
}
#endif

// w[k] = Philox word of element i0 + k (k < count <= kChunk); u = uniform01(w[k]) is philox_uniform(seed,
// stream, i0 + k) exactly. `buf` holds kChunk + 40 words. Returns w.
inline const uint32_t* dropout_words(uint32_t* buf, int64_t i0, int count, DropoutKey key) {
  const uint64_t first_block = static_cast<uint64_t>(i0) >> 2;
  const int nblocks = static_cast<int>(((static_cast<uint64_t>(i0) + count + 3) >> 2) - first_block);
  const uint32_t s_lo = static_cast<uint32_t>(key.stream), s_hi = static_cast<uint32_t>(key.stream >> 32);
  const uint32_t k0 = static_cast<uint32_t>(key.seed), k1 = static_cast<uint32_t>(key.seed >> 32);
  int b = 0;
#if defined(__AVX2__)
  for (; b + 8 * kGroups <= nblocks; b += 8 * kGroups) philox_groups(buf + 4 * b, first_block + b, s_lo, s_hi, k0, k1);
#endif
  for (; b < nblocks; ++b) {
    uint64_t blk = first_block + b;
    util::Philox4 r = util::philox4x32(static_cast<uint32_t>(blk), static_cast<uint32_t>(blk >> 32), s_lo, s_hi, k0, k1);
    for (int k = 0; k < 4; ++k) buf[4 * b + k] = r.v[k];
  }
  return buf + (i0 & 3);
}

inline float keep_scale(float p) { return p < 1.0f ? 1.0f / (1.0f - p) : 0.0f; }

}  // namespace

}  // namespace tt::backend::cpu::TT_CPU_ISA
