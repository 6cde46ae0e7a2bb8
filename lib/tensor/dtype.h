// Element types. f32 for activations, weights and optimizer state; i32 for token ids and lengths.
// (bf16 matmuls with f32 master weights are the planned next step; keep switch statements exhaustive.)
#pragma once

#include <cstddef>
#include <string>

namespace tt::tensor {

enum class DType { f32, i32 };

inline size_t dtype_size(DType t) { return t == DType::f32 ? 4 : 4; }
inline std::string dtype_name(DType t) { return t == DType::f32 ? "F32" : "I32"; }

}  // namespace tt::tensor
