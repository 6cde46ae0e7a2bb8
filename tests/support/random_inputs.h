// Deterministic random inputs for the kernel tests of every backend (tests/backend, tests/cuda): one
// definition, so a case written for one backend means the same on another. Fixed seeds only.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace tt::test {

// Uniform floats in [lo, hi).
inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

// Uniform ids in [lo, hi_exclusive), like a vocabulary of hi_exclusive entries.
inline std::vector<int32_t> random_ids(size_t n, uint32_t seed, int32_t lo, int32_t hi_exclusive) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int32_t> dist(lo, hi_exclusive - 1);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

}  // namespace tt::test
