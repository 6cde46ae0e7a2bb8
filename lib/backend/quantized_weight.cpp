#include "backend/quantized_weight.h"

#include <algorithm>
#include <cmath>

#include "util/bf16.h"
#include "util/error.h"

namespace tt::backend {

using util::from_bf16;
using util::to_bf16;

QuantizedWeight QuantizedWeight::quantize(MatmulPrecision type, const float* w, int N, int K, int64_t ldw) {
  QuantizedWeight q;
  q.type = type;
  q.N = N;
  q.K = K;
  const size_t n = static_cast<size_t>(N) * static_cast<size_t>(K);
  if (type == MatmulPrecision::bf16) {
    q.bf16.resize(n);
    for (int r = 0; r < N; ++r)
      for (int k = 0; k < K; ++k) q.bf16[static_cast<size_t>(r) * K + k] = to_bf16(w[r * ldw + k]);
    return q;
  }
  if (type != MatmulPrecision::int8) throw InternalError("QuantizedWeight::quantize: int8 or bf16 only");
  // The same operations, in the same order, as the kernel that quantizes fp32 weights when they are packed
  // (backend/cpu/kernels/quantize.cpp), so both give the same bits.
  q.s8.resize(n);
  q.scales.resize(static_cast<size_t>(N));
  const float top = static_cast<float>(kInt8Levels);
  for (int r = 0; r < N; ++r) {
    const float* x = w + r * ldw;
    float absmax = 0.0f;
    for (int k = 0; k < K; ++k) absmax = std::max(absmax, std::fabs(x[k]));
    const float inv = absmax > 0.0f ? top / absmax : 0.0f;
    q.scales[static_cast<size_t>(r)] = absmax / top;
    for (int k = 0; k < K; ++k)
      q.s8[static_cast<size_t>(r) * K + k] = static_cast<int8_t>(std::min(top, std::max(-top, std::nearbyint(x[k] * inv))));
  }
  return q;
}

void QuantizedWeight::dequantize(float* out, int64_t ldo) const {
  for (int r = 0; r < N; ++r)
    for (int k = 0; k < K; ++k) {
      const size_t i = static_cast<size_t>(r) * K + k;
      out[r * ldo + k] = type == MatmulPrecision::fp32   ? f32[i]
                         : type == MatmulPrecision::bf16 ? from_bf16(bf16[i])
                                                         : static_cast<float>(s8[i]) * scales[static_cast<size_t>(r)];
    }
}

std::shared_ptr<const StoredWeight> StoredWeight::of(QuantizedWeight values) {
  auto w = std::make_shared<StoredWeight>();
  w->type = values.type;
  w->N = values.N;
  w->K = values.K;
  w->read = [v = std::make_shared<const QuantizedWeight>(std::move(values))] { return *v; };
  return w;
}

}  // namespace tt::backend
