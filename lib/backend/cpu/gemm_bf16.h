// The bf16 state of one CpuBackend's matrix products (gemm_bf16.cpp; their primitives are in the backend's
// MatmulCache): the operand conversion buffers, the held bf16 copy of the weights
// (Backend::hold_bf16_weights) and of kept operands (keep_bf16_operand).
#pragma once

#include <cstdint>
#include <vector>

#include "backend/cpu/bf16_operand_cache.h"

namespace tt::backend::cpu {

struct Bf16Gemm {
  std::vector<uint16_t> a_buf, b_buf;

  // The held weights: [weights, weights + weights_n) mirrored in weights_bf16.
  const float* weights = nullptr;
  int64_t weights_n = 0;
  std::vector<uint16_t> weights_bf16;
  // Operands kept while the weights are held (Backend::keep_bf16_operand).
  Bf16OperandCache kept;
  int64_t converted = 0;  // elements converted by a pass of their own (not a held, kept or kernel-written copy)
};

}  // namespace tt::backend::cpu
