// The bf16 matrix products of one CpuBackend (gemm_bf16.cpp): oneDNN `matmul` primitives with bf16 operands
// and fp32 accumulation and output, cached per shape; the operand conversion buffers; the held bf16 copy of
// the weights (Backend::hold_bf16_weights) and of kept operands (keep_bf16_operand).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>

#include "backend/cpu/bf16_operand_cache.h"

namespace tt::backend::cpu {

struct Bf16Gemm {
  // Key: batch1, batch2, M, N, K, trans_a, trans_b, alpha and beta bits, the three strides of C. Operands
  // are always dense bf16 (converted so), so their strides follow from the shape.
  using Key = std::array<int64_t, 12>;
  struct Entry {
    dnnl::matmul prim;
    dnnl::memory a, b, c;  // user-pointer memories; handles swapped on every call
    std::unordered_map<int, dnnl::memory> args;
  };
  static constexpr size_t kMaxEntries = 512;

  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::map<Key, Entry> entries;
  std::map<Key, bool> unsupported;  // shapes oneDNN refused in bf16: those run in fp32
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
