// The oneDNN state of one CpuBackend: engine, stream and the cached batched `matmul` primitives.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>

#include "backend/cpu/packed_gemm.h"

namespace tt::backend::cpu {

struct MatmulCache {
  // Key: trans_a, trans_b, batch1, batch2, M, N, K, alpha and beta bits, the nine strides.
  using Key = std::array<int64_t, 18>;
  struct Entry {
    dnnl::matmul prim;
    dnnl::memory a, b, c;  // user-pointer memories; the data handle is swapped on every call
    std::unordered_map<int, dnnl::memory> args;  // built once: execute() then allocates nothing
  };
  static constexpr size_t kMaxEntries = 512;  // attention shapes vary with batch length; bound the cache

  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::map<Key, Entry> entries;
  std::map<Key, bool> unsupported;  // keys oneDNN refused: those use the sgemm loop
  std::map<Key, int> seen;          // uses of keys without a primitive yet
  std::unique_ptr<PackedGemm> packed;  // row-invariant products with packed weights (after engine: destroyed first)
};

}  // namespace tt::backend::cpu
