// One float to bfloat16 and back on the host, rounded as the CPU kernels and the hardware's vcvtneps2bf16
// round (backend/cpu/kernels/bf16_row.h): to nearest, ties to even; a NaN stays a quiet NaN.
#pragma once

#include <cstdint>
#include <cstring>

namespace tt::util {

inline uint16_t to_bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

inline float from_bf16(uint16_t b) {
  const uint32_t u = uint32_t{b} << 16;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

}  // namespace tt::util
