// The dropout draws (util::dropout_draw: Philox4x32-10, 16 bits per element) for a run of flat element
// indices, vectorised with AVX-512 or AVX2 where the variant has it. Shared by the dropout kernels and the
// fused ones that drop in place (fused attention); internal linkage, so each instruction-set variant has
// its own copy.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "backend/cpu/kernels/kernel_functions.h"
#include "util/rng.h"

namespace tt::backend::cpu::TT_CPU_ISA {
namespace {

constexpr int kChunk = 1024;  // elements per mask piece (a stack buffer of Philox words)

#if defined(__AVX512F__) && defined(__AVX512VL__)
// GCC 12 warns, wrongly, that the AVX-512 intrinsics' internal placeholder (_mm512_undefined_epi32) "may
// be used uninitialized" wherever they are inlined (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// AVX-512: 16 blocks per vector. The high and low words of the two multiplies are picked by masked
// shuffles (one instruction each instead of a shift and a blend), and the round's xors are three-way
// (vpternlogd): 12 instructions per round for 16 blocks, against AVX2's 18 for 8.
constexpr int kPhiloxLanes = 16;
constexpr int kGroups = 2;  // independent multiply chains, as below for AVX2
inline void mulhilo(__m512i a, __m512i m, __m512i* lo, __m512i* hi) {
  const __m512i even = _mm512_mul_epu32(a, m);                       // lanes 2j: 64-bit products of a[2j]
  const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);  // lanes 2j: products of a[2j + 1]
  *hi = _mm512_mask_shuffle_epi32(odd, 0x5555, even, _MM_PERM_CDAB);  // lane 2j: even's high, 2j+1: odd's high
  *lo = _mm512_mask_shuffle_epi32(even, 0xAAAA, odd, _MM_PERM_CDAB);  // lane 2j: even's low, 2j+1: odd's low
}
inline void philox_groups(uint32_t* out, uint64_t block, uint32_t s_lo, uint32_t s_hi, uint32_t k0, uint32_t k1) {
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512i c0[kGroups], c1[kGroups], c2[kGroups], c3[kGroups];
  for (int g = 0; g < kGroups; ++g) {
    const uint64_t first = block + static_cast<uint64_t>(kPhiloxLanes * g);
    const __m512i base = _mm512_set1_epi32(static_cast<int>(static_cast<uint32_t>(first)));
    c0[g] = _mm512_add_epi32(base, iota);
    // The high word carries where the low one wrapped around.
    c1[g] = _mm512_mask_add_epi32(_mm512_set1_epi32(static_cast<int>(first >> 32)),
                                  _mm512_cmplt_epu32_mask(c0[g], base),
                                  _mm512_set1_epi32(static_cast<int>(first >> 32)), _mm512_set1_epi32(1));
    c2[g] = _mm512_set1_epi32(static_cast<int>(s_lo));
    c3[g] = _mm512_set1_epi32(static_cast<int>(s_hi));
  }
  const __m512i m0 = _mm512_set1_epi32(static_cast<int>(0xD2511F53u));
  const __m512i m1 = _mm512_set1_epi32(static_cast<int>(0xCD9E8D57u));
  for (int round = 0; round < 10; ++round) {
    const __m512i vk0 = _mm512_set1_epi32(static_cast<int>(k0)), vk1 = _mm512_set1_epi32(static_cast<int>(k1));
    for (int g = 0; g < kGroups; ++g) {
      __m512i lo0, hi0, lo1, hi1;
      mulhilo(c0[g], m0, &lo0, &hi0);
      mulhilo(c2[g], m1, &lo1, &hi1);
      c0[g] = _mm512_ternarylogic_epi32(hi1, c1[g], vk0, 0x96);  // hi1 ^ c1 ^ k0
      c2[g] = _mm512_ternarylogic_epi32(hi0, c3[g], vk1, 0x96);  // hi0 ^ c3 ^ k1
      c1[g] = lo1;
      c3[g] = lo0;
    }
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  for (int g = 0; g < kGroups; ++g) {
    // 4 words x 16 blocks into block order: within each 128-bit lane as AVX2 does (u0..u3 hold blocks
    // 4L .. 4L+3 of lane L), then a 4x4 transpose of the 128-bit lanes.
    const __m512i t0 = _mm512_unpacklo_epi32(c0[g], c1[g]), t1 = _mm512_unpackhi_epi32(c0[g], c1[g]);
    const __m512i t2 = _mm512_unpacklo_epi32(c2[g], c3[g]), t3 = _mm512_unpackhi_epi32(c2[g], c3[g]);
    const __m512i u0 = _mm512_unpacklo_epi64(t0, t2), u1 = _mm512_unpackhi_epi64(t0, t2);
    const __m512i u2 = _mm512_unpacklo_epi64(t1, t3), u3 = _mm512_unpackhi_epi64(t1, t3);
    const __m512i a = _mm512_shuffle_i32x4(u0, u1, _MM_SHUFFLE(1, 0, 1, 0));
    const __m512i b = _mm512_shuffle_i32x4(u2, u3, _MM_SHUFFLE(1, 0, 1, 0));
    const __m512i c = _mm512_shuffle_i32x4(u0, u1, _MM_SHUFFLE(3, 2, 3, 2));
    const __m512i d = _mm512_shuffle_i32x4(u2, u3, _MM_SHUFFLE(3, 2, 3, 2));
    uint32_t* o = out + 4 * kPhiloxLanes * g;
    _mm512_storeu_si512(o + 0, _mm512_shuffle_i32x4(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
    _mm512_storeu_si512(o + 16, _mm512_shuffle_i32x4(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
    _mm512_storeu_si512(o + 32, _mm512_shuffle_i32x4(c, d, _MM_SHUFFLE(2, 0, 2, 0)));
    _mm512_storeu_si512(o + 48, _mm512_shuffle_i32x4(c, d, _MM_SHUFFLE(3, 1, 3, 1)));
  }
}
#pragma GCC diagnostic pop
#elif defined(__AVX2__)
constexpr int kPhiloxLanes = 8;
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

// Halves read from the words' storage: may_alias, so the compiler orders them after the words' stores.
typedef uint16_t __attribute__((may_alias)) DrawHalf;

// d[k] = the 16-bit dropout draw of element i0 + k (k < count <= kChunk), util::dropout_draw exactly: the
// Philox words of the elements' blocks in order, read as 16-bit halves (x86 is little-endian: the low
// half first). `buf` holds kChunk + 40 words. Returns d.
inline const DrawHalf* dropout_draws(uint32_t* buf, int64_t i0, int count, DropoutKey key) {
  const uint64_t first_block = static_cast<uint64_t>(i0) >> 3;
  const int nblocks = static_cast<int>(((static_cast<uint64_t>(i0) + count + 7) >> 3) - first_block);
  int b = 0;
#if defined(__AVX2__)
  const uint32_t s_lo = static_cast<uint32_t>(key.stream), s_hi = static_cast<uint32_t>(key.stream >> 32);
  const uint32_t k0 = static_cast<uint32_t>(key.seed), k1 = static_cast<uint32_t>(key.seed >> 32);
  constexpr int kStep = kPhiloxLanes * kGroups;  // blocks per vector call
  for (; b + kStep <= nblocks; b += kStep) philox_groups(buf + 4 * b, first_block + b, s_lo, s_hi, k0, k1);
  if (nblocks - b > 2) {  // a tail of more than two blocks: one vector call beside, cheaper than scalar ones
    alignas(64) uint32_t tail[4 * kStep];
    philox_groups(tail, first_block + b, s_lo, s_hi, k0, k1);
    std::memcpy(buf + 4 * b, tail, sizeof(uint32_t) * 4 * static_cast<size_t>(nblocks - b));
    b = nblocks;
  }
#endif
  for (; b < nblocks; ++b) {
    const util::Philox4 r = util::dropout_block(key.seed, key.stream, first_block + b);
    for (int k = 0; k < 4; ++k) buf[4 * b + k] = r.v[k];
  }
  return reinterpret_cast<const DrawHalf*>(buf) + (i0 & 7);
}

inline float keep_scale(float p) { return p < 1.0f ? 1.0f / (1.0f - p) : 0.0f; }

}  // namespace

}  // namespace tt::backend::cpu::TT_CPU_ISA
