// The bf16 product tests' backend: the processor's bf16 products, or none (with a note) where it has no
// bf16 instructions — those tests then check only that bf16 was refused.
#pragma once

#include <catch2/catch.hpp>
#include <memory>

#include "backend/backend.h"

namespace tt::test {

inline std::unique_ptr<backend::Backend> bf16_backend(int threads) {
  auto be = backend::make_backend("cpu", threads);
  if (!be->set_matmul_precision(backend::MatmulPrecision::bf16)) {
    CHECK(be->matmul_precision() == backend::MatmulPrecision::fp32);
    WARN("no bf16 instructions (oneDNN ISA " << be->matmul_isa() << "): bf16 products not tested here");
    return nullptr;
  }
  CHECK(be->matmul_precision() == backend::MatmulPrecision::bf16);
  return be;
}

}  // namespace tt::test
