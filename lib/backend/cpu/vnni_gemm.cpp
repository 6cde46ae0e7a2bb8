#include "backend/cpu/vnni_gemm.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstring>
#include <limits>

#include "util/error.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tt::backend::cpu {

bool vnni_gemm_available() {
#if defined(__x86_64__)
  const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const auto vnni = static_cast<unsigned>(dnnl_cpu_isa_avx512_core_vnni);
  return (isa & vnni) == vnni;
#else
  return false;
#endif
}

int own_int8_max_k() {
  if (!vnni_gemm_available()) return 0;
  const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const auto amx = static_cast<unsigned>(dnnl_cpu_isa_avx512_core_amx);
  return (isa & amx) == amx ? 256 : std::numeric_limits<int>::max();
}

std::vector<int8_t> pack_vnni_panels(const int8_t* rows, int width, int K) {
  const int panels = (width + kVnniPanelCols - 1) / kVnniPanelCols;
  std::vector<int8_t> packed(static_cast<size_t>(panels) * kVnniPanelCols * static_cast<size_t>(K), 0);
  for (int j = 0; j < width; ++j) {
    int8_t* panel = packed.data() + static_cast<size_t>(j / kVnniPanelCols) * kVnniPanelCols * static_cast<size_t>(K);
    const int col = j % kVnniPanelCols;
    for (int k = 0; k < K; ++k)
      panel[static_cast<size_t>(k / 4) * kVnniPanelCols * 4 + static_cast<size_t>(col) * 4 + k % 4] =
          rows[static_cast<size_t>(j) * static_cast<size_t>(K) + static_cast<size_t>(k)];
  }
  return packed;
}

#if defined(__x86_64__)
namespace {

#define TT_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

// Rows r0 .. r0 + R of A against one panel (64 columns, `cols` of them real): 4 * R accumulators, the
// panel's 4 registers of a k-quad loaded once for all R rows.
template <int R>
TT_VNNI inline void panel_rows(float* C, int64_t ldc, const uint8_t* A, int K, const int8_t* panel, int cols,
                               const int32_t* shift_sums, const float* row_scales, const float* col_scales) {
  __m512i acc[R][4];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_setzero_si512();
  for (int q = 0; q < K / 4; ++q) {
    const int8_t* b = panel + static_cast<size_t>(q) * kVnniPanelCols * 4;
    const __m512i b0 = _mm512_loadu_si512(b), b1 = _mm512_loadu_si512(b + 64), b2 = _mm512_loadu_si512(b + 128),
                  b3 = _mm512_loadu_si512(b + 192);
    // The panel's quad 8 ahead (2 KB) asked for now: a beam of 4 rows passes over its panels too fast for the
    // hardware prefetcher, and at K = 2048 they come from L2 (M 4 products +15-20 %, ffn2 +8 %, bench_decode_gemm).
    for (int line = 0; line < 256; line += 64)
      _mm_prefetch(reinterpret_cast<const char*>(b + 8 * 256 + line), _MM_HINT_T0);  // past the end: no fault
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      int32_t quad;
      std::memcpy(&quad, A + static_cast<size_t>(r) * static_cast<size_t>(K) + static_cast<size_t>(q) * 4, 4);
      const __m512i a = _mm512_set1_epi32(quad);
      acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], a, b0);
      acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], a, b1);
      acc[r][2] = _mm512_dpbusd_epi32(acc[r][2], a, b2);
      acc[r][3] = _mm512_dpbusd_epi32(acc[r][3], a, b3);
    }
  }
  // float(sum - shift_sum) * row scale * column scale, in dequantize_s32's order (the same bits).
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    const int left = cols - 16 * c;
    if (left <= 0) break;
    const __mmask16 m = left >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << left) - 1);
    const __m512i offsets = _mm512_maskz_loadu_epi32(m, shift_sums + 16 * c);
    const __m512 scales = _mm512_maskz_loadu_ps(m, col_scales + 16 * c);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 sums = _mm512_maskz_cvtepi32_ps(m, _mm512_sub_epi32(acc[r][c], offsets));
      const __m512 v = _mm512_mul_ps(_mm512_mul_ps(sums, _mm512_set1_ps(row_scales[r])), scales);
      _mm512_mask_storeu_ps(C + static_cast<int64_t>(r) * ldc + 16 * c, m, v);
    }
  }
}

}  // namespace

TT_VNNI void vnni_gemm_dequant(float* C, int64_t ldc, const uint8_t* A, int rows, int K, const int8_t* panels,
                               int width, const int32_t* shift_sums, const float* row_scales,
                               const float* col_scales) {
  using Rows = void (*)(float*, int64_t, const uint8_t*, int, const int8_t*, int, const int32_t*, const float*,
                        const float*);
  static constexpr Rows kByCount[] = {nullptr, panel_rows<1>, panel_rows<2>, panel_rows<3>,
                                      panel_rows<4>, panel_rows<5>, panel_rows<6>};
  // 6 rows: 24 accumulators, the panel's 4 registers and A's broadcast fill 29 of the 32 registers (5 and 4
  // ran 0-20 % slower, bench_decode_gemm, Intel Xeon).
  constexpr int kRows = 6;
  // Panel by panel: up to K = 512 its 64 * K bytes stay in L1 for every row group. (Row groups outer, A's
  // rows in L1 and the panels from L2, ran as fast at K = 2048 and 2 % slower at 512.)
  for (int j0 = 0; j0 < width; j0 += kVnniPanelCols) {
    const int8_t* panel = panels + static_cast<size_t>(j0) * static_cast<size_t>(K);  // 64 * K bytes a panel
    const int cols = std::min(kVnniPanelCols, width - j0);
    for (int r = 0; r < rows; r += kRows)
      kByCount[std::min(kRows, rows - r)](C + r * ldc + j0, ldc, A + static_cast<size_t>(r) * static_cast<size_t>(K),
                                          K, panel, cols, shift_sums + j0, row_scales + r, col_scales + j0);
  }
}
#else
void vnni_gemm_dequant(float*, int64_t, const uint8_t*, int, int, const int8_t*, int, const int32_t*, const float*,
                       const float*) {
  throw InternalError("vnni_gemm_dequant: not an x86-64 build (vnni_gemm_available() is false)");
}
#endif

}  // namespace tt::backend::cpu
