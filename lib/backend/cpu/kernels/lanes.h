// Row reductions (max, sum, dot) in 16 lanes of a GCC vector type, for the fused kernels' short rows.
// Lane l takes elements l, l + 16, ... in order, then the lanes fold in halves; a tail (n not a multiple
// of 16) is added after, in order. Zero padding (or -inf for the max) leaves every lane as it was, so a
// padded row reduces to the same bits as the unpadded one. The vector type keeps the lanes in registers on
// every variant (one zmm with AVX-512): GCC's code for an `omp simd reduction` over rows of a few vectors
// spilled them and reloaded them through store-forwarding stalls, costing more than the arithmetic.
// Internal linkage: each instruction-set variant compiles its own copy.
#pragma once

#include <cstdint>
#include <cstring>

#include "backend/cpu/kernels/kernel_functions.h"

namespace tt::backend::cpu::TT_CPU_ISA {
namespace {

constexpr int kLanes = 16;
typedef float Lanes __attribute__((vector_size(kLanes * sizeof(float))));
typedef int32_t LaneIndex __attribute__((vector_size(kLanes * sizeof(int32_t))));

// (Lanes go by reference: a 64-byte vector passed by value has an ISA-dependent ABI, which GCC warns of.)
inline void load_lanes(Lanes& v, const float* x) { std::memcpy(&v, x, sizeof v); }
template <bool kMax>
inline void combine(Lanes& x, const Lanes& y) {
  if constexpr (kMax) x = x > y ? x : y;
  else x += y;
}
template <bool kMax>
inline float fold(Lanes& x) {
  combine<kMax>(x, __builtin_shuffle(x, LaneIndex{8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7}));
  combine<kMax>(x, __builtin_shuffle(x, LaneIndex{4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11}));
  combine<kMax>(x, __builtin_shuffle(x, LaneIndex{2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13}));
  combine<kMax>(x, __builtin_shuffle(x, LaneIndex{1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14}));
  return x[0];
}

// Max of x[0, n), n >= 1.
inline float row_max(const float* x, int n) {
  int j = 0;
  float m = x[0];
  if (n >= kLanes) {
    Lanes a, y;
    load_lanes(a, x);
    for (j = kLanes; j + kLanes <= n; j += kLanes) {
      load_lanes(y, x + j);
      combine<true>(a, y);
    }
    m = fold<true>(a);
  }
  for (; j < n; ++j) m = m > x[j] ? m : x[j];
  return m;
}
// Max and sum of x[0, n) in one pass, n >= 1, each in two alternating accumulators (a long row: the add
// chain would otherwise set the pace).
inline void row_max_sum(const float* x, int n, float* max, float* sum) {
  int j = 0;
  float m = x[0], s = 0.0f;
  if (n >= 2 * kLanes) {
    Lanes m0, m1, s0, s1, a, b;
    load_lanes(m0, x);
    load_lanes(m1, x + kLanes);
    s0 = m0;
    s1 = m1;
    for (j = 2 * kLanes; j + 2 * kLanes <= n; j += 2 * kLanes) {
      load_lanes(a, x + j);
      load_lanes(b, x + j + kLanes);
      combine<true>(m0, a);
      combine<true>(m1, b);
      s0 += a;
      s1 += b;
    }
    combine<true>(m0, m1);
    s0 += s1;
    m = fold<true>(m0);
    s = fold<false>(s0);
  }
  for (; j < n; ++j) {
    m = m > x[j] ? m : x[j];
    s += x[j];
  }
  *max = m;
  *sum = s;
}
inline float row_sum(const float* x, int n) {
  Lanes a = {}, y;
  int j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    load_lanes(y, x + j);
    a += y;
  }
  float s = fold<false>(a);
  for (; j < n; ++j) s += x[j];
  return s;
}
inline float row_dot(const float* x, const float* y, int n) {
  Lanes a = {}, u, v;
  int j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    load_lanes(u, x + j);
    load_lanes(v, y + j);
    a += u * v;
  }
  float s = fold<false>(a);
  for (; j < n; ++j) s += x[j] * y[j];
  return s;
}

}  // namespace
}  // namespace tt::backend::cpu::TT_CPU_ISA
