// The 16 lanes of lanes.h held in registers of this instruction set's own width (4 floats with SSE2, 8
// with AVX2, 16 with AVX-512), for loops that keep many accumulators live: GCC splits a 16-float vector
// into halves on AVX2 and spills arrays of them, while native registers stay put. Lane l of the 16 is lane
// l % kRegLanes of register l / kRegLanes, and fold_regs adds them in fold<false>'s tree (l with l + 8,
// then + 4, + 2, + 1), so a sum reduced here has the same bits as in lanes.h on every variant.
#pragma once

#include <cstdint>
#include <cstring>

#include "backend/cpu/kernels/lanes.h"

namespace tt::backend::cpu::TT_CPU_ISA {
namespace {

#if defined(__AVX512F__)
constexpr int kRegLanes = 16;
#elif defined(__AVX__)
constexpr int kRegLanes = 8;
#else
constexpr int kRegLanes = 4;
#endif
constexpr int kRegsPerLanes = kLanes / kRegLanes;  // registers holding one 16-lane group
typedef float Reg __attribute__((vector_size(kRegLanes * sizeof(float))));
typedef int32_t RegIndex __attribute__((vector_size(kRegLanes * sizeof(int32_t))));

inline void load_reg(Reg& r, const float* x) { std::memcpy(&r, x, sizeof r); }
inline void store_reg(float* x, const Reg& r) { std::memcpy(x, &r, sizeof r); }

// r[0, kRegsPerLanes) added into one register in fold<false>'s first steps (lane l with l + 8, then with
// l + 4, as far as the registers go); r is overwritten.
inline Reg combine_regs(Reg* r) {
  for (int half = kRegsPerLanes / 2; half >= 1; half /= 2)
    for (int i = 0; i < half; ++i) r[i] += r[i + half];
  return r[0];
}

// The sum of the 16 lanes in r[0, kRegsPerLanes) (r is overwritten).
inline float fold_regs(Reg* r) {
  Reg x = combine_regs(r);
#if defined(__AVX512F__)
  return fold<false>(x);  // one register holds all 16 lanes: lanes.h's own fold
#elif defined(__AVX__)
  x += __builtin_shuffle(x, RegIndex{4, 5, 6, 7, 0, 1, 2, 3});
  x += __builtin_shuffle(x, RegIndex{2, 3, 0, 1, 6, 7, 4, 5});
  x += __builtin_shuffle(x, RegIndex{1, 0, 3, 2, 5, 4, 7, 6});
  return x[0];
#else
  x += __builtin_shuffle(x, RegIndex{2, 3, 0, 1});
  x += __builtin_shuffle(x, RegIndex{1, 0, 3, 2});
  return x[0];
#endif
}

// fold_regs of four sums at once, r[g][0, kRegsPerLanes) for g < 4, into out[g] (r is overwritten): the
// shuffles combine two heads' registers, so four heads cost fewer shuffles than four folds.
inline void fold4_regs(float* out, Reg (*r)[kRegsPerLanes]) {
#if defined(__AVX512F__) || defined(__AVX__)
  const Reg x[4] = {combine_regs(r[0]), combine_regs(r[1]), combine_regs(r[2]), combine_regs(r[3])};
#endif
#if defined(__AVX512F__)
  const RegIndex lo{0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23};
  const RegIndex hi{8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31};
  const Reg u0 = __builtin_shuffle(x[0], x[1], lo) + __builtin_shuffle(x[0], x[1], hi);  // 8 lanes each
  const Reg u1 = __builtin_shuffle(x[2], x[3], lo) + __builtin_shuffle(x[2], x[3], hi);
  const RegIndex lo4{0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27};
  const RegIndex hi4{4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31};
  Reg v = __builtin_shuffle(u0, u1, lo4) + __builtin_shuffle(u0, u1, hi4);  // 4 lanes each
  v += __builtin_shuffle(v, RegIndex{2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13});
  v += __builtin_shuffle(v, RegIndex{1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14});
  for (int g = 0; g < 4; ++g) out[g] = v[4 * g];
#elif defined(__AVX__)
  const RegIndex lo{0, 1, 2, 3, 8, 9, 10, 11}, hi{4, 5, 6, 7, 12, 13, 14, 15};
  const Reg u0 = __builtin_shuffle(x[0], x[1], lo) + __builtin_shuffle(x[0], x[1], hi);  // 4 lanes each
  const Reg u1 = __builtin_shuffle(x[2], x[3], lo) + __builtin_shuffle(x[2], x[3], hi);
  const RegIndex lo2{0, 1, 4, 5, 8, 9, 12, 13}, hi2{2, 3, 6, 7, 10, 11, 14, 15};
  Reg v = __builtin_shuffle(u0, u1, lo2) + __builtin_shuffle(u0, u1, hi2);  // 2 lanes each
  v += __builtin_shuffle(v, RegIndex{1, 0, 3, 2, 5, 4, 7, 6});
  for (int g = 0; g < 4; ++g) out[g] = v[2 * g];
#else
  for (int g = 0; g < 4; ++g) out[g] = fold_regs(r[g]);
#endif
}

}  // namespace
}  // namespace tt::backend::cpu::TT_CPU_ISA
