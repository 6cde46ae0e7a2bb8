// The bf16 matrix products of one CudaBackend (gemm_bf16.cu): the cuBLASLt handle and workspace, one plan
// per product shape (descriptors and the heuristic's algorithm), the operand conversion buffers and the
// held bf16 copy of the weights (Backend::hold_bf16_weights). Include only from .cu files.
#pragma once

#include <cublasLt.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>

#include "backend/cuda/device_buffer.h"

namespace tt::backend {

struct CudaBf16Gemm {
  struct HandleDeleter {
    void operator()(cublasLtContext* handle) const noexcept { cublasLtDestroy(handle); }
  };

  // One cuBLASLt product: column-major D[m, n] = alpha op(A) op(B) + beta C (C and D share layout and
  // memory), strided batch of `count`. ok == false: cuBLASLt offered no algorithm; the product runs in fp32.
  struct Plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
    bool ok = false;

    Plan() = default;
    ~Plan() {
      if (c) cublasLtMatrixLayoutDestroy(c);
      if (b) cublasLtMatrixLayoutDestroy(b);
      if (a) cublasLtMatrixLayoutDestroy(a);
      if (desc) cublasLtMatmulDescDestroy(desc);
    }
    Plan(const Plan&) = delete;
    Plan& operator=(const Plan&) = delete;
  };

  // count, m, n, k, trans a, trans b, ld a, ld b, ld c, batch stride a, b, c, alignment (bytes) a, b, c,
  // beta != 0
  using Key = std::array<int64_t, 16>;
  static constexpr size_t kMaxPlans = 1024;
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // what NVIDIA suggests for Hopper

  std::unique_ptr<cublasLtContext, HandleDeleter> handle;
  DeviceBuffer workspace;
  std::map<Key, std::unique_ptr<Plan>> plans;
  DeviceBuffer a_buf, b_buf;  // operands converted to dense bf16
  DeviceBuffer c_buf;         // fp32 products of a grid whose C no single batch stride describes

  // The held weights: [weights, weights + weights_n) mirrored element for element in weights_bf16.
  const float* weights = nullptr;
  int64_t weights_n = 0;
  DeviceBuffer weights_bf16;
};

}  // namespace tt::backend
