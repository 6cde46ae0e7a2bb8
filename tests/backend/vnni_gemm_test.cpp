// The int8 decoding products' own AVX-512 VNNI kernel (backend/cpu/vnni_gemm.h): exact integer sums
// dequantized as packed_gemm.cpp's oneDNN path does it, so every element equals the worked formula and the
// oneDNN path's result, bit for bit, on each panel and row-group edge. Skipped (with a note) on a CPU
// without AVX-512 VNNI, and under the suite's DNNL_MAX_CPU_ISA=AVX2 run.
#include <catch2/catch.hpp>

#include <cstdint>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>

#include "backend/cpu/kernels/kernel_table.h"
#include "backend/cpu/packed_gemm.h"
#include "backend/cpu/vnni_gemm.h"
#include "backend/kernel_fixture.h"

using namespace tt;
using backend::cpu::PackedGemm;
using tt::test::random_floats;

namespace {

bool vnni_or_note() {
  if (backend::cpu::vnni_gemm_available()) return true;
  WARN("no AVX-512 VNNI here (as oneDNN sees the CPU): the own int8 kernel is not used or tested");
  return false;
}

std::vector<float> product(bool own_kernel, int threads, const std::vector<float>& x, const std::vector<float>& w,
                           int M, int N, int K) {
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  const backend::cpu::KernelContext ctx{threads, nullptr, nullptr};
  PackedGemm gemm(engine, threads, backend::cpu::select_kernels(), ctx);
  gemm.set_own_int8_kernel(own_kernel);
  std::vector<float> c(size_t(M) * N, 7.0f);
  REQUIRE(gemm.run(M, N, K, x.data(), K, w.data(), K, c.data(), N, PackedGemm::Operands::s8));
  return c;
}

}  // namespace

TEST_CASE("vnni int8 kernel: every element is the worked dequantized integer sum", "[backend][gemm][int8]") {
  if (!vnni_or_note()) return;
  // 13 rows: two groups of 6 and a single row; 150 columns: two whole panels and one of 22 columns.
  const int rows = 13, width = 150, K = 20;
  std::mt19937 gen(7);
  std::uniform_int_distribution<int> u8(0, 255), s8(-127, 127);
  std::vector<uint8_t> a(size_t(rows) * K);
  std::vector<int8_t> b(size_t(width) * K);
  for (auto& v : a) v = static_cast<uint8_t>(u8(gen));
  for (auto& v : b) v = static_cast<int8_t>(s8(gen));
  a[0] = 255;  // the extremes: u8 255 against s8 -127 (where an int16 pair sum would saturate)
  b[0] = -127;
  const auto row_scales = random_floats(rows, 3, 0.001f, 0.1f), col_scales = random_floats(width, 4, 0.001f, 0.1f);
  std::vector<int32_t> shift_sums(width);
  for (int j = 0; j < width; ++j) shift_sums[size_t(j)] = 1000 * (j % 5) - 2000;
  const std::vector<int8_t> panels = backend::cpu::pack_vnni_panels(b.data(), width, K);
  REQUIRE(panels.size() == size_t(3) * backend::cpu::kVnniPanelCols * K);
  const int64_t ldc = width + 3;  // a strided C: the gap must stay as it was
  std::vector<float> c(size_t(rows) * ldc, -5.0f);
  backend::cpu::vnni_gemm_dequant(c.data(), ldc, a.data(), rows, K, panels.data(), width, shift_sums.data(),
                                  row_scales.data(), col_scales.data());
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j < width; ++j) {
      int32_t sum = 0;
      for (int k = 0; k < K; ++k) sum += int32_t{a[size_t(r) * K + k]} * b[size_t(j) * K + k];
      const float expected =
          static_cast<float>(sum - shift_sums[size_t(j)]) * row_scales[size_t(r)] * col_scales[size_t(j)];
      INFO("row " << r << " column " << j);
      REQUIRE(c[size_t(r) * ldc + j] == expected);
    }
    for (int64_t j = width; j < ldc; ++j) REQUIRE(c[size_t(r) * ldc + size_t(j)] == -5.0f);
  }
}

TEST_CASE("vnni int8 kernel: PackedGemm gives oneDNN's int8 bits on every shape edge", "[backend][gemm][int8]") {
  if (!vnni_or_note()) return;
  struct Shape {
    int M, N, K;
  };
  // Rows over 64 (two items), a beam of 4, one row; panels' and wide blocks' tails; K 4 (one quad), 2048
  // (a `base` FFN's second product: 256-column blocks); K 90, no multiple of 4: oneDNN either way.
  for (const Shape s : {Shape{130, 1100, 128}, Shape{4, 384, 256}, Shape{1, 8000, 128}, Shape{67, 70, 4},
                        Shape{9, 300, 2048}, Shape{7, 40, 90}}) {
    INFO("M " << s.M << " N " << s.N << " K " << s.K);
    const auto x = random_floats(size_t(s.M) * s.K, 61, -3, 3), w = random_floats(size_t(s.N) * s.K, 62, -0.5, 0.5);
    const auto onednn = product(false, 2, x, w, s.M, s.N, s.K);
    CHECK(product(true, 2, x, w, s.M, s.N, s.K) == onednn);
    CHECK(product(true, 1, x, w, s.M, s.N, s.K) == onednn);
  }
}
