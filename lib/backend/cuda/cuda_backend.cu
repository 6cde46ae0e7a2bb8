// The CUDA backend's factory, lifetime, memory and copies. Kernels live in the files named after their CPU
// twins (gemm.cu, layer_norm.cu, softmax.cu, ...).
#include "backend/cuda/cuda_backend.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_plugin_abi.h"
#include "backend/cuda/gemm_bf16.h"
#include "backend/cuda/kernel_utils.h"

namespace tt::backend {

using namespace cuda_kernels;

namespace {

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {  // no driver, no device, or a driver/runtime mismatch
    cudaGetLastError();
    return 0;
  }
  return count;
}

std::unique_ptr<Backend> make_device_backend(int index) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    throw Error(std::string("no usable CUDA device: ") + cudaGetErrorString(status),
                "check the driver with nvidia-smi, or run with --device cpu");
  }
  if (count == 0) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    throw Error(std::string("no CUDA device is visible") +
                    (visible ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")" : std::string()),
                "run with --device cpu");
  }
  if (index < 0 || index >= count) {
    throw Error("CUDA device " + std::to_string(index) + " does not exist (" + std::to_string(count) +
                    " visible)",
                "pick a device in 0.." + std::to_string(count - 1) + " or run with --device cpu");
  }
  return std::make_unique<CudaBackend>(index);
}

}  // namespace

void CudaStreamDeleter::operator()(CUstream_st* stream) const noexcept { cudaStreamDestroy(stream); }
void CublasDeleter::operator()(cublasContext* handle) const noexcept { cublasDestroy(handle); }

CudaBackend::CudaBackend(int device_index) : device_(device_index) {
  TT_CUDA_CHECK(cudaSetDevice(device_));
  cudaDeviceProp prop{};
  TT_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
  name_ = "cuda:" + std::to_string(device_) + " (" + prop.name + ")";
  TT_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device_));
  allocator_ = std::make_unique<CachingAllocator>(device_);

  cudaStream_t stream = nullptr;
  TT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  stream_.reset(stream);
  cublasHandle_t handle = nullptr;
  TT_CUBLAS_CHECK(cublasCreate(&handle));
  cublas_.reset(handle);
  TT_CUBLAS_CHECK(cublasSetStream(handle, stream));
  // Plain FP32 (no TF32 tensor-core rounding): results stay within float rounding of the CPU backend's.
  TT_CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));

  reduce_scratch_ = DeviceBuffer(*allocator_, (kReduceBlocks + 1) * sizeof(double));
}

CudaBackend::~CudaBackend() {
  // Let queued kernels finish before their stream, handle and memory go away; errors cannot be reported here.
  if (stream_ && cudaStreamSynchronize(stream_.get()) != cudaSuccess) cudaGetLastError();
}

void* CudaBackend::allocate(size_t bytes) { return allocator_->allocate(bytes); }

void CudaBackend::deallocate(void* ptr, size_t /*bytes*/) noexcept { allocator_->deallocate(ptr); }

void CudaBackend::copy_from_host(void* dst, const void* host_src, size_t bytes) {
  if (bytes == 0) return;
  TT_CUDA_CHECK(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, stream_.get()));
  // The caller may reuse or free its host buffer as soon as we return.
  TT_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
}

void CudaBackend::copy_to_host(void* host_dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  TT_CUDA_CHECK(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, stream_.get()));
  TT_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
}

void CudaBackend::copy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return;
  TT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_.get()));
}

namespace {

__global__ void fill_kernel(float* x, float value, int64_t n) {
  for (int64_t i = thread_index(); i < n; i += thread_stride()) x[i] = value;
}

}  // namespace

void CudaBackend::fill(float* x, float value, int64_t n) {
  if (n <= 0) return;
  if (value == 0.0f && !std::signbit(value)) {  // +0.0f is all-zero bytes
    TT_CUDA_CHECK(cudaMemsetAsync(x, 0, static_cast<size_t>(n) * sizeof(float), stream_.get()));
    return;
  }
  fill_kernel<<<grid_for(n, kBlock), kBlock, 0, stream_.get()>>>(x, value, n);
  TT_CUDA_CHECK_LAUNCH();
}

void CudaBackend::synchronize() { TT_CUDA_CHECK(cudaStreamSynchronize(stream_.get())); }

}  // namespace tt::backend

extern "C" const tt::backend::CudaPluginEntry* tt_cuda_plugin_entry() {
  static constexpr tt::backend::CudaPluginEntry entry{tt::backend::kCudaPluginAbi, tt::backend::device_count,
                                                      tt::backend::make_device_backend};
  return &entry;
}
