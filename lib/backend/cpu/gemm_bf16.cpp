// bf16 matrix products (Backend::set_matmul_precision(bf16)): operands rounded to bf16, products
// accumulated and written in fp32 by oneDNN's `matmul` primitive, which picks AMX, avx512_core_bf16 or
// what else the processor has. fp32 operands are converted into dense bf16 buffers by the per-ISA kernel
// (kernels/convert.cpp) — the conversion also packs strided views (attention's [B, T, H, Dh] heads), so
// the primitives only ever see dense operands; operands inside the held weights are read from the bf16
// copy made once per step, and kept operands (bf16_operand_cache.h) from their copy made at first use.
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/gemm_bf16.h"
#include "backend/cpu/matmul_cache.h"
#include "util/bf16.h"
#include "util/error.h"

namespace tt::backend::cpu {
namespace {

std::string isa_name(dnnl_cpu_isa_t isa) {
  switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "isa 0x" + [&] {
      char buf[16];
      std::snprintf(buf, sizeof buf, "%x", static_cast<unsigned>(isa));
      return std::string(buf);
    }();
  }
}

// True when oneDNN may use bf16 instructions (avx512_core_bf16 or AMX); without them oneDNN would
// emulate bf16 slower than fp32, so tt does not offer it.
bool has_bf16_instructions(dnnl_cpu_isa_t isa) {
  const auto need = static_cast<unsigned>(dnnl_cpu_isa_avx512_core_bf16);
  return (static_cast<unsigned>(isa) & need) == need;
}

}  // namespace

std::string CpuBackend::matmul_isa() const { return isa_name(dnnl_get_effective_cpu_isa()); }

bool CpuBackend::set_matmul_precision(MatmulPrecision p) {
  if (p == MatmulPrecision::bf16 && !has_bf16_instructions(dnnl_get_effective_cpu_isa())) return false;
  precision_ = p;
  return true;
}

void CpuBackend::hold_bf16_weights(const float* values, int64_t n) {
  if (precision_ != MatmulPrecision::bf16) return;
  if (!bf16_) bf16_ = std::make_unique<Bf16Gemm>();
  Bf16Gemm& g = *bf16_;
  if (g.weights_bf16.size() < static_cast<size_t>(n)) g.weights_bf16.resize(static_cast<size_t>(n));
  kernels_->convert_to_bf16(ctx_, g.weights_bf16.data(), values, 1, 1, 1, n, MatrixStrides{n, n, n});
  g.weights = values;
  g.weights_n = n;
}

uint16_t* CpuBackend::bf16_weights_to_write(int64_t n) {
  if (precision_ != MatmulPrecision::bf16) return nullptr;
  if (!bf16_) bf16_ = std::make_unique<Bf16Gemm>();
  if (bf16_->weights) throw InternalError("bf16_weights_to_write while the weights are held");
  if (bf16_->weights_bf16.size() < static_cast<size_t>(n)) bf16_->weights_bf16.resize(static_cast<size_t>(n));
  return bf16_->weights_bf16.data();
}

void CpuBackend::hold_written_bf16_weights(const float* values, int64_t n) {
  if (precision_ != MatmulPrecision::bf16) return;
  if (!bf16_ || bf16_->weights_bf16.size() < static_cast<size_t>(n))
    throw InternalError("hold_written_bf16_weights without a written copy");
  // A sample, so that weights changed after the copy was written (a caller breaking the contract) fail
  // loudly instead of training on stale products.
  const uint16_t* copy = bf16_->weights_bf16.data();
  for (int64_t k = 0, samples = std::min<int64_t>(n, 257); k < samples; ++k) {
    const int64_t i = samples > 1 ? k * (n - 1) / (samples - 1) : 0;
    if (util::to_bf16(values[i]) != copy[i])
      throw InternalError("the weights changed after the optimizer wrote their bf16 copy (element " +
                          std::to_string(i) + ")");
  }
  bf16_->weights = values;
  bf16_->weights_n = n;
}

void CpuBackend::release_bf16_weights() {
  if (bf16_) {
    bf16_->weights = nullptr;
    bf16_->weights_n = 0;
    bf16_->kept.clear();
  }
}

void CpuBackend::keep_bf16_operand(const float* values, int64_t n) {
  if (bf16_ && bf16_->weights) bf16_->kept.keep(values, n);
}

void CpuBackend::forget_bf16_operand(const float* values) {
  if (bf16_) bf16_->kept.forget(values);
}

Bf16Storage* CpuBackend::bf16_storage() { return bf16_ && bf16_->weights ? this : nullptr; }

void CpuBackend::round_to_bf16(uint16_t* y16, const float* x, const float* bias, int batch1, int batch2, int64_t rows,
                               int64_t cols, MatrixStrides s) {
  if (!bf16_storage()) throw InternalError("round_to_bf16 outside a bf16 training step");
  const int64_t n = int64_t{batch1} * batch2 * rows * cols;
  if (n <= 0) return;
  if (bias) kernels_->convert_to_bf16_with_bias(ctx_, y16, x, bias, batch1, batch2, rows, cols, s);
  else kernels_->convert_to_bf16(ctx_, y16, x, batch1, batch2, rows, cols, s);
  bf16_->converted += n;
}

namespace {

// The fp32 values of a stored dense bf16 operand (exact), for a shape oneDNN runs in fp32 only.
const float* widen(std::vector<float>& wide, const void* x16, int64_t n) {
  const auto* x = static_cast<const uint16_t*>(x16);
  wide.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) wide[i] = std::bit_cast<float>(uint32_t{x[i]} << 16);
  return wide.data();
}

}  // namespace

void CpuBackend::gemm_bf16_operand(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const void* A,
                                   int64_t lda, bool a16, const void* B, int64_t ldb, bool b16, float beta, float* C,
                                   int64_t ldc) {
  gemm_batched_bf16_operand(trans_a, trans_b, 1, 1, M, N, K, alpha, A, {0, 0, lda}, a16, B, {0, 0, ldb}, b16, beta,
                            C, {0, 0, ldc});
}

void CpuBackend::gemm_batched_bf16_operand(bool trans_a, bool trans_b, int batch1, int batch2, int M, int N, int K,
                                           float alpha, const void* A, MatrixStrides as, bool a16, const void* B,
                                           MatrixStrides bs, bool b16, float beta, float* C, MatrixStrides cs) {
  if (batch1 <= 0 || batch2 <= 0 || M <= 0 || N <= 0) return;
  if (!bf16_storage()) throw InternalError("gemm_bf16_operand outside a bf16 training step");
  const int64_t a_rows = trans_a ? K : M, a_cols = trans_a ? M : K, b_rows = trans_b ? N : K, b_cols = trans_b ? K : N;
  auto dense = [&](MatrixStrides s, int64_t rows, int64_t cols) {
    return Bf16OperandCache::Layout{nullptr, batch1, batch2, rows, cols, s}.dense();
  };
  if ((a16 && !dense(as, a_rows, a_cols)) || (b16 && !dense(bs, b_rows, b_cols)))
    throw InternalError("gemm_bf16_operand: a bf16 operand must be dense");
  const auto* a_stored = a16 ? static_cast<const uint16_t*>(A) : nullptr;
  const auto* b_stored = b16 ? static_cast<const uint16_t*>(B) : nullptr;
  const auto* af = a16 ? nullptr : static_cast<const float*>(A);
  const auto* bf = b16 ? nullptr : static_cast<const float*>(B);
  if (gemm_bf16(trans_a, trans_b, batch1, batch2, M, N, K, alpha, af, as, bf, bs, beta, C, cs, a_stored, b_stored))
    return;
  // A shape oneDNN runs in fp32 only (or K == 0): widen the stored operands and take the fp32 path.
  std::vector<float> wide_a, wide_b;
  const int64_t grid = int64_t{batch1} * batch2;
  if (a16) af = widen(wide_a, A, grid * a_rows * a_cols);
  if (b16) bf = widen(wide_b, B, grid * b_rows * b_cols);
  if (batch1 == 1 && batch2 == 1) gemm(trans_a, trans_b, M, N, K, alpha, af, as.ld, bf, bs.ld, beta, C, cs.ld);
  else gemm_batched(trans_a, trans_b, batch1, batch2, M, N, K, alpha, af, as, bf, bs, beta, C, cs);
}

int64_t CpuBackend::bf16_kept_ranges() const { return bf16_ ? bf16_->kept.kept_ranges() : 0; }

int64_t CpuBackend::bf16_converted() const { return bf16_ ? bf16_->converted : 0; }

// A dense bf16 copy of one operand: the held weights when it lies inside them, the kept copy when it lies
// inside a kept range (converted at its first use), else converted into buf.
const uint16_t* CpuBackend::bf16_operand(std::vector<uint16_t>& buf, const float* x, int batch1, int batch2,
                                         int64_t rows, int64_t cols, MatrixStrides s) {
  Bf16Gemm& g = *bf16_;
  const Bf16OperandCache::Layout operand{x, batch1, batch2, rows, cols, s};
  const int64_t n = operand.size();
  // Addresses compared as integers: x need not point into the held buffer.
  const auto at = reinterpret_cast<uintptr_t>(x), begin = reinterpret_cast<uintptr_t>(g.weights);
  if (g.weights && at >= begin && (at - begin) / sizeof(float) + static_cast<uint64_t>(n) <= static_cast<uint64_t>(g.weights_n) &&
      (at - begin) % sizeof(float) == 0 && operand.dense())
    return g.weights_bf16.data() + (at - begin) / sizeof(float);
  bool fresh = false;
  uint16_t* y = g.kept.find(operand, fresh);
  if (!y) {
    if (buf.size() < static_cast<size_t>(n)) buf.resize(static_cast<size_t>(n));
    y = buf.data();
    fresh = true;
  }
  if (fresh) {
    kernels_->convert_to_bf16(ctx_, y, x, batch1, batch2, rows, cols, s);
    g.converted += n;
  }
  return y;
}

uint16_t* CpuBackend::bf16_output_copy(const float* x, int64_t n) {
  if (!bf16_ || !bf16_->weights || n <= 0) return nullptr;
  bool fresh = false;  // the kernel fills the copy whether or not one existed (it rewrites x too)
  return bf16_->kept.find({x, 1, 1, 1, n, MatrixStrides{n, n, n}}, fresh);
}

bool CpuBackend::gemm_bf16(bool trans_a, bool trans_b, int batch1, int batch2, int M, int N, int K, float alpha,
                           const float* A, MatrixStrides as, const float* B, MatrixStrides bs, float beta, float* C,
                           MatrixStrides cs, const uint16_t* a_stored, const uint16_t* b_stored) {
  if (K <= 0) return false;  // the fp32 path scales C
  if (!bf16_) bf16_ = std::make_unique<Bf16Gemm>();
  Bf16Gemm& g = *bf16_;
  MatmulCache& cache = matmul_cache();
  // Operands are always dense bf16 (converted so), so their strides follow from the shape.
  const bool batched = batch1 > 1 || batch2 > 1;
  const MatmulPrimitives::Key key{MatmulPrimitives::bf16, trans_a, trans_b, batch1, batch2, M, N, K,
                                  std::bit_cast<int32_t>(alpha), std::bit_cast<int32_t>(beta), 0, 0, 0, 0, 0, 0,
                                  batched ? cs.batch1 : 0, batched ? cs.batch2 : 0, cs.ld};
  if (cache.primitives.refused(key)) return false;  // a shape oneDNN refused in bf16: it runs in fp32
  omp_set_num_threads(threads_);  // oneDNN sizes its parallel region from this ICV (cpu_backend.h)

  MatmulPrimitives::Entry* e = cache.primitives.find(key);
  if (!e) {
    using dnnl::memory;
    using dt = memory::data_type;
    const int64_t m = M, n = N, k = K;
    // Dense operands: A stored [M, K] (or [K, M] when trans_a), B stored [K, N] (or [N, K] when trans_b).
    memory::desc a_md, b_md, c_md;
    if (batched) {
      a_md = memory::desc({batch1, batch2, m, k}, dt::bf16,
                          trans_a ? memory::dims{batch2 * m * k, m * k, 1, m} : memory::dims{batch2 * m * k, m * k, k, 1});
      b_md = memory::desc({batch1, batch2, k, n}, dt::bf16,
                          trans_b ? memory::dims{batch2 * k * n, k * n, 1, k} : memory::dims{batch2 * k * n, k * n, n, 1});
      c_md = memory::desc({batch1, batch2, m, n}, dt::f32, memory::dims{cs.batch1, cs.batch2, cs.ld, 1});
    } else {
      a_md = memory::desc({m, k}, dt::bf16, trans_a ? memory::dims{1, m} : memory::dims{k, 1});
      b_md = memory::desc({k, n}, dt::bf16, trans_b ? memory::dims{1, k} : memory::dims{n, 1});
      c_md = memory::desc({m, n}, dt::f32, memory::dims{cs.ld, 1});
    }
    // A reference (unoptimised) implementation would be far slower than fp32 sgemm: refused too.
    e = cache.primitives.get(key, a_md, b_md, c_md, alpha, beta, /*no_reference=*/true);
    if (!e) return false;
  }

  const uint16_t* a16 =
      a_stored ? a_stored : bf16_operand(g.a_buf, A, batch1, batch2, trans_a ? K : M, trans_a ? M : K, as);
  const uint16_t* b16 =
      b_stored ? b_stored : bf16_operand(g.b_buf, B, batch1, batch2, trans_b ? N : K, trans_b ? K : N, bs);
  cache.primitives.run(*e, cache.stream, a16, b16, C);
  return true;
}

}  // namespace tt::backend::cpu
