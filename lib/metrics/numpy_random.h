// numpy's default_rng(seed) (PCG64 seeded through SeedSequence) and the two draws sacreBLEU's
// significance tests make with it, reproduced bit for bit so that tt-bleu's paired tests resample the
// same segments as sacreBLEU's for the same seed (SACREBLEU_SEED, default 12345):
//   rng.choice(n, size=(s, n), replace=True)     -> bounded integers (Lemire's method on 32-bit draws)
//   rng.integers(2, size=(s, n), dtype=bool)     -> bits of 32-bit draws
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tt::metrics {

class NumpyRandom {
 public:
  explicit NumpyRandom(uint64_t seed);

  // count integers uniform in [0, n) (n <= 2^32), as Generator.integers(0, n, dtype=int64).
  std::vector<uint32_t> integers(uint64_t n, size_t count);
  // count booleans, as Generator.integers(2, dtype=bool).
  std::vector<uint8_t> booleans(size_t count);

  uint64_t next64();
  uint32_t next32();

 private:
  // 128-bit state and increment as (high, low) halves.
  uint64_t state_hi_ = 0, state_lo_ = 0, inc_hi_ = 0, inc_lo_ = 0;
  bool has_uint32_ = false;
  uint32_t uinteger_ = 0;
  void step();
};

}  // namespace tt::metrics
