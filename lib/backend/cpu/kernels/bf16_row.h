// fp32 -> bf16 of one row, round to nearest even as the hardware's vcvtneps2bf16; NaN stays a (quiet)
// NaN. An integer loop each instruction-set variant vectorises. Shared by the conversion kernel and the
// kernels that write a bf16 copy of what they produce (cross-entropy's gradient). Internal linkage: each
// variant compiles its own copy.
#pragma once

#include <cstdint>
#include <cstring>

#include "backend/cpu/kernels/kernel_functions.h"

namespace tt::backend::cpu::TT_CPU_ISA {
namespace {

inline void to_bf16_row(uint16_t* __restrict y, const float* __restrict x, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, x + i, sizeof u);
    const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    y[i] = static_cast<uint16_t>(nan ? ((u >> 16) | 0x40u) : rounded);
  }
}

}  // namespace
}  // namespace tt::backend::cpu::TT_CPU_ISA
