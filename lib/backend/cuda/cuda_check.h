// TT_CUDA_CHECK / TT_CUBLAS_CHECK: every CUDA runtime and cuBLAS call goes through one of these. A failure
// throws tt::Error naming the call site (file:line), the failed expression and the library's error text,
// so a tool ends with one clear message instead of an abort. Include only from .cu files.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <sstream>
#include <string>

#include "util/error.h"

namespace tt::backend::cuda_detail {

[[noreturn]] inline void cuda_failed(cudaError_t status, const char* expr, const char* file, int line) {
  std::ostringstream os;
  os << file << ":" << line << ": CUDA error " << cudaGetErrorName(status) << " (" << cudaGetErrorString(status)
     << ") in " << expr;
  throw Error(os.str(), "check the GPU with nvidia-smi, or run with --device cpu");
}

[[noreturn]] inline void cublas_failed(cublasStatus_t status, const char* expr, const char* file, int line) {
  std::ostringstream os;
  os << file << ":" << line << ": cuBLAS error " << cublasGetStatusName(status) << " ("
     << cublasGetStatusString(status) << ") in " << expr;
  throw Error(os.str(), "check the GPU with nvidia-smi, or run with --device cpu");
}

}  // namespace tt::backend::cuda_detail

#define TT_CUDA_CHECK(expr)                                                              \
  do {                                                                                   \
    cudaError_t tt_cuda_status_ = (expr);                                                \
    if (tt_cuda_status_ != cudaSuccess)                                                  \
      ::tt::backend::cuda_detail::cuda_failed(tt_cuda_status_, #expr, __FILE__, __LINE__); \
  } while (0)

#define TT_CUBLAS_CHECK(expr)                                                              \
  do {                                                                                     \
    cublasStatus_t tt_cublas_status_ = (expr);                                             \
    if (tt_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                        \
      ::tt::backend::cuda_detail::cublas_failed(tt_cublas_status_, #expr, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: reports bad launch configurations at the launch site (asynchronous faults surface
// at the next synchronising call).
#define TT_CUDA_CHECK_LAUNCH() TT_CUDA_CHECK(cudaGetLastError())
