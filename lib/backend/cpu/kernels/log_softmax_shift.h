// The shift of a row's log-softmax, max + log(sum exp(x - max)), shared by log_softmax and
// log_softmax_topk so that both give a column the same bits (x - shift). Internal linkage: each
// instruction-set variant compiles its own copy.
#pragma once

#include <cmath>

#include "backend/cpu/fast_math.h"
#include "backend/cpu/kernels/kernel_functions.h"
#include "backend/cpu/kernels/lanes.h"

namespace tt::backend::cpu::TT_CPU_ISA {
namespace {

// (The max in lanes: GCC left `omp simd reduction(max)` over std::max scalar here, one dependent vmaxss
// per column, half of the function's time. A max is exact in any order.)
inline float log_softmax_shift(const float* row, int V) {
  const float mx = row_max(row, V);
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int k = 0; k < V; ++k) sum += fast_exp_nonpositive(row[k] - mx);
  return mx + std::log(sum);
}

}  // namespace
}  // namespace tt::backend::cpu::TT_CPU_ISA
