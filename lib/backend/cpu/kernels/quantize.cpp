// Symmetric int8 quantization for the int8 products against packed weights (packed_gemm.cpp).
//   quantize_rows_s8: x [rows, K] (row stride ldx) -> q [rows, K] s8 dense, scales [rows]:
//                     scale = max|x_row| / L, q = round(x * L / max|x_row|) (ties to even), |q| <= L = levels;
//                     shift_to_u8: q + 128 stored as u8 instead (the products' A operand, packed_gemm.cpp)
//   dequantize_s32:   C[i, j] = float(acc[i, j] - col_offsets[j]) * row_scales[i] * col_scales[j]; acc
//                     [rows, width] dense, C row stride ldc; the offsets take the u8 shift's sums off again.
//                     Single-threaded: it runs inside the products' parallel loop.
// Each row is quantized from its own values alone, and int32 sums are exact, so a row's result never
// depends on the other rows of the batch.
#include <cmath>

#include "backend/cpu/kernels/kernel_functions.h"

namespace tt::backend::cpu::TT_CPU_ISA {

void quantize_rows_s8(const KernelContext& ctx, int8_t* q, float* scales, const float* x, int64_t rows, int K,
                      int64_t ldx, int levels, bool shift_to_u8) {
  const int offset = shift_to_u8 ? 128 : 0;
  const int nt = threads_for(ctx, rows * K * 2);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * ldx;
    int8_t* qr = q + r * K;
    float absmax = 0.0f;
#pragma omp simd reduction(max : absmax)
    for (int k = 0; k < K; ++k) absmax = std::max(absmax, std::fabs(xr[k]));
    const float top = static_cast<float>(levels);
    const float inv = absmax > 0.0f ? top / absmax : 0.0f;
    scales[r] = absmax / top;
#pragma omp simd
    for (int k = 0; k < K; ++k) {
      const float v = std::nearbyint(xr[k] * inv);
      const int level = static_cast<int>(std::min(top, std::max(-top, v)));
      qr[k] = static_cast<int8_t>(static_cast<uint8_t>(level + offset));  // modulo 256: q, or q + 128 as u8
    }
  }
}

void dequantize_s32(const KernelContext& /*ctx*/, float* C, int64_t ldc, const int32_t* acc, int rows, int width,
                    const int32_t* col_offsets, const float* row_scales, const float* col_scales) {
  for (int i = 0; i < rows; ++i) {
    const float s = row_scales[i];
    float* c = C + i * ldc;
    const int32_t* a = acc + static_cast<int64_t>(i) * width;
#pragma omp simd
    for (int j = 0; j < width; ++j) c[j] = static_cast<float>(a[j] - col_offsets[j]) * s * col_scales[j];
  }
}

}  // namespace tt::backend::cpu::TT_CPU_ISA
