// A weight matrix W [N, K] stored quantized on disk (tt-convert quantize) and handed to a backend as it is,
// so that inference never holds its fp32 values. The quantization is the one the backend's own int8 and
// bf16 products apply to fp32 weights, so a model quantized on disk translates exactly like the fp32 model
// with the same --compute-type:
//   int8: per output row n, scale_n = max_k |W[n, k]| / 127 and q[n, k] = round_half_even(W[n, k] * (127 /
//         max_k |W[n, k]|)) (0 for an all-zero row); W ~ q * scale;
//   bf16: each value rounded to the nearest bfloat16, ties to even.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/backend.h"

namespace tt::backend {

struct QuantizedWeight {
  static constexpr int kInt8Levels = 127;  // the largest |q|
  MatmulPrecision type = MatmulPrecision::int8;  // int8 or bf16
  int N = 0, K = 0;
  std::vector<int8_t> s8;      // int8: [N, K]
  std::vector<float> scales;   // int8: [N]
  std::vector<uint16_t> bf16;  // bf16: [N, K]

  // W [N, K] (row stride ldw) quantized as above.
  static QuantizedWeight quantize(MatmulPrecision type, const float* w, int N, int K, int64_t ldw);
  // The fp32 values this stands for (q * scale, or the bf16 value), into out [N, K] (row stride ldo).
  void dequantize(float* out, int64_t ldo) const;
};

}  // namespace tt::backend
