// The oneDNN state of one CpuBackend: engine, stream and the cached `matmul` primitives of every operand
// type (matmul_primitives.h), the packed weights of row-invariant products (packed_gemm.h).
#pragma once

#include <map>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>

#include "backend/cpu/matmul_primitives.h"
#include "backend/cpu/packed_gemm.h"

namespace tt::backend::cpu {

// The process's one oneDNN CPU engine (a handle: copies share it). Memory made by one backend is then valid
// for another's primitives: decoding workers read one packed copy of the weights (PackedGemm::share_store_of).
inline const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

struct MatmulCache {
  dnnl::engine engine = cpu_engine();
  dnnl::stream stream{engine};
  MatmulPrimitives primitives{engine};
  std::map<MatmulPrimitives::Key, int> seen;  // fp32: uses of keys without a primitive yet
  static constexpr size_t kMaxSeen = 512;
  std::unique_ptr<PackedGemm> packed;  // row-invariant products with packed weights (after engine: destroyed first)
};

}  // namespace tt::backend::cpu
