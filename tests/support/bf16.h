// bfloat16 rounding for the bf16 tests' references: round to nearest, ties to even (what oneDNN, tt's
// conversion kernels and __float2bfloat16_rn do for finite values).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace tt::test {

inline float round_bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  u = ((u + 0x7fffu + ((u >> 16) & 1u)) >> 16) << 16;
  std::memcpy(&x, &u, sizeof u);
  return x;
}

inline std::vector<float> rounded_bf16(std::vector<float> v) {
  for (float& x : v) x = round_bf16(x);
  return v;
}

}  // namespace tt::test
