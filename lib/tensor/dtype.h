// Element types. f32 for activations, weights and optimizer state; i32 for token ids and lengths; bf16
// (bfloat16 bits in a uint16_t) for activations a bf16 training step stores only rounded, because every
// reader of theirs rounds them anyway (Backend::bf16_storage); u8 for flags (the dropout flags fused
// attention keeps for its backward). Keep switch statements exhaustive.
#pragma once

#include <cstddef>
#include <string>

#include "util/error.h"

namespace tt::tensor {

enum class DType { f32, i32, bf16, u8 };

// Exhaustive switches: a new enumerator makes -Wswitch warn here, and a value outside the enum (a corrupt
// cast) throws instead of being sized as 4 bytes by a fall-through default.
inline size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::i32: return 4;
    case DType::bf16: return 2;
    case DType::u8: return 1;
  }
  throw InternalError("dtype_size: unknown DType " + std::to_string(static_cast<int>(t)));
}

inline std::string dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "F32";
    case DType::i32: return "I32";
    case DType::bf16: return "BF16";
    case DType::u8: return "U8";
  }
  throw InternalError("dtype_name: unknown DType " + std::to_string(static_cast<int>(t)));
}

}  // namespace tt::tensor
