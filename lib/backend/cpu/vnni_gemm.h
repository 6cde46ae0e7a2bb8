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

// Whether this CPU (as oneDNN sees it, so that DNNL_MAX_CPU_ISA caps it too) has AVX-512 VNNI.
bool vnni_gemm_available();

// The largest K whose int8 products this kernel runs by default: any K (a multiple of 4) with VNNI and no
// AMX; with AMX only K <= 256, where oneDNN's AMX tiles have too short a sum to pay for their calls. One
// thread of an AMX Xeon, 4..128 rows, this kernel's time against AMX's: K = 128 0.48-1.18x (the 8,000-wide
// output layer 0.56-0.82x), K = 256 0.58x at 4 rows to 1.23x at 64; K = 512 up to 2.3x. tt-translate int8,
// demo model (K 128 and 256), same outputs: -11 to -14 % time with one worker, -6 to -12 % with two. 0
// without VNNI.
int own_int8_max_k();

// rows: B's rows c0 .. c0 + width (the block's output columns), each K s8 values, row stride K.
std::vector<int8_t> pack_vnni_panels(const int8_t* rows, int width, int K);

// C[r, j] = float(sum_k A[r, k] * B[j, k] - shift_sums[j]) * row_scales[r] * col_scales[j] for r < rows,
// j < width; A u8 [rows, K] dense (quantized + 128: the shift_sums take it off), C row stride ldc.
// Single-threaded: it runs inside the products' parallel loop.
void vnni_gemm_dequant(float* C, int64_t ldc, const uint8_t* A, int rows, int K, const int8_t* panels, int width,
                       const int32_t* shift_sums, const float* row_scales, const float* col_scales);

}  // namespace tt::backend::cpu
