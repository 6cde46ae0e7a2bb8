// A weight matrix W [N, K] as a model file stores it — float32, or quantized by tt-convert quantize — handed to
// a decoding backend as it is, so that inference never holds its fp32 values beside the packed copy. The quantization is the one the backend's own int8 and
// bf16 products apply to fp32 weights, so a model quantized on disk translates exactly like the fp32 model
// with the same --compute-type:
//   int8: per output row n, scale_n = max_k |W[n, k]| / 127 and q[n, k] = round_half_even(W[n, k] * (127 /
//         max_k |W[n, k]|)) (0 for an all-zero row); W ~ q * scale;
//   bf16: each value rounded to the nearest bfloat16, ties to even.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "backend/backend.h"

namespace tt::backend {

// The values of W [N, K] in one of those forms, or as float32 (type fp32: a weight stored unquantized).
struct QuantizedWeight {
  static constexpr int kInt8Levels = 127;  // the largest |q|
  MatmulPrecision type = MatmulPrecision::int8;
  int N = 0, K = 0;
  std::vector<int8_t> s8;      // int8: [N, K]
  std::vector<float> scales;   // int8: [N]
  std::vector<uint16_t> bf16;  // bf16: [N, K]
  std::vector<float> f32;      // fp32: [N, K]

  // W [N, K] (row stride ldw) quantized as above (int8 or bf16).
  static QuantizedWeight quantize(MatmulPrecision type, const float* w, int N, int K, int64_t ldw);
  // The fp32 values this stands for (q * scale, the bf16 value, or the value), into out [N, K] (row stride ldo).
  void dequantize(float* out, int64_t ldo) const;
};

// A weight as a model file stores it, read when a backend packs it (and again only if it must pack it
// anew), so that decoding holds its packed copy alone: neither the fp32 values nor a second copy of the
// stored ones.
struct StoredWeight {
  MatmulPrecision type = MatmulPrecision::fp32;
  int N = 0, K = 0;
  std::function<QuantizedWeight()> read;  // may be called from any thread

  // One that holds `values` in memory (no file behind it).
  static std::shared_ptr<const StoredWeight> of(QuantizedWeight values);
};

}  // namespace tt::backend
