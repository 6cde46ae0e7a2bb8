#include "train/precision.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "tensor/tensor.h"
#include "util/error.h"

namespace tt::train {

namespace {

// The fastest of a few runs of one [M, K] x [K, N] product at `p`: a shape of training's size (a batch of
// 1,024 tokens through a 512 -> 1,024 projection, 1 GFLOP), so the fixed costs of a call do not decide.
double product_seconds(backend::Backend& backend, backend::MatmulPrecision p, const float* a, const float* b,
                       float* c) {
  constexpr int M = 1024, K = 512, N = 1024, runs = 3;
  backend.set_matmul_precision(p);
  double best = 1e30;
  for (int i = 0; i <= runs; ++i) {  // the first builds the kernel: not counted
    const auto start = std::chrono::steady_clock::now();
    backend.gemm(false, false, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N);
    backend.synchronize();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i > 0) best = std::min(best, s);
  }
  return best;
}

}  // namespace

bool bf16_is_faster(double seconds_fp32, double seconds_bf16) { return seconds_bf16 <= 0.9 * seconds_fp32; }

PrecisionPick resolve_precision(backend::Backend& backend, const std::string& requested) {
  if (requested != "auto") return {requested, ""};
  const backend::MatmulPrecision before = backend.matmul_precision();
  if (!backend.set_matmul_precision(backend::MatmulPrecision::bf16)) {
    backend.set_matmul_precision(before);
    return {"fp32", ""};
  }
  using tensor::Tensor;
  const Tensor a = Tensor::empty(backend, {1024, 512}), b = Tensor::empty(backend, {512, 1024});
  Tensor c = Tensor::empty(backend, {1024, 1024});
  backend.fill(a.f32(), 0.5f, a.numel());
  backend.fill(b.f32(), 0.25f, b.numel());
  // Alternated, so a neighbour's load falls on both.
  double fp32 = 1e30, bf16 = 1e30;
  for (int round = 0; round < 2; ++round) {
    fp32 = std::min(fp32, product_seconds(backend, backend::MatmulPrecision::fp32, a.f32(), b.f32(), c.f32()));
    bf16 = std::min(bf16, product_seconds(backend, backend::MatmulPrecision::bf16, a.f32(), b.f32(), c.f32()));
  }
  backend.set_matmul_precision(before);
  const bool pick_bf16 = bf16_is_faster(fp32, bf16);
  char reason[160];
  std::snprintf(reason, sizeof reason, "--precision auto: a 1024x512x1024 product took %.2f ms in bf16, %.2f ms in "
                "fp32: %s", bf16 * 1e3, fp32 * 1e3, pick_bf16 ? "bf16" : "fp32 (bf16 is not faster here)");
  return {pick_bf16 ? "bf16" : "fp32", reason};
}

std::string use_precision(backend::Backend& backend, const std::string& precision) {
  const bool bf16 = precision == "bf16";
  if (bf16 && !backend.set_matmul_precision(backend::MatmulPrecision::bf16))
    throw Error(option_ref("precision") + " bf16 is not available on " + backend.name() +
                (backend.matmul_isa().empty() ? std::string() : ", oneDNN ISA " + backend.matmul_isa()) +
                " (a CPU needs AVX512-BF16 or AMX): use " + option_ref("precision") + " fp32");
  const std::string isa = backend.matmul_isa();
  return precision + " matmuls" + (isa.empty() ? "" : " (oneDNN " + isa + ")");
}

}  // namespace tt::train
