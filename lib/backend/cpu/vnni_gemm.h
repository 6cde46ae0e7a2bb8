// int8 decoding products on AVX-512 VNNI without oneDNN: C = dequantized (A_u8 · B_s8^T), one pass.
//
// Why: a decoding step's products are small (the demo model's are 4..128 rows by K = 128 or 256), and
// through oneDNN each tile costs a call of a few microseconds besides its sums, then a pass that reads
// the int32 sums back to dequantize them (together about a fifth of int8 decoding, Intel Xeon). Here the
// sums stay in registers and are dequantized as they are stored. Integer sums are exact, so C has the
// bits oneDNN's path gives (the same dequantization, operation for operation: packed_gemm.h).
//
// B is packed once into panels of 64 columns: [K / 4][64][4] bytes, each group of 4 consecutive k of one
// column as vpdpbusd reads them; a block's last panel is padded with zero columns. K must be a multiple of 4.
#pragma once

#include <cstdint>
#include <vector>

namespace tt::backend::cpu {

inline constexpr int kVnniPanelCols = 64;

// Whether this CPU (as oneDNN sees it, so that DNNL_MAX_CPU_ISA caps it too) has AVX-512 VNNI and no AMX
// (there oneDNN's AMX int8 kernels are left to run the products; not measured against these).
bool vnni_gemm_available();

// rows: B's rows c0 .. c0 + width (the block's output columns), each K s8 values, row stride K.
std::vector<int8_t> pack_vnni_panels(const int8_t* rows, int width, int K);

// C[r, j] = float(sum_k A[r, k] * B[j, k] - shift_sums[j]) * row_scales[r] * col_scales[j] for r < rows,
// j < width; A u8 [rows, K] dense (quantized + 128: the shift_sums take it off), C row stride ldc.
// Single-threaded: it runs inside the products' parallel loop.
void vnni_gemm_dequant(float* C, int64_t ldc, const uint8_t* A, int rows, int K, const int8_t* panels, int width,
                       const int32_t* shift_sums, const float* row_scales, const float* col_scales);

}  // namespace tt::backend::cpu
