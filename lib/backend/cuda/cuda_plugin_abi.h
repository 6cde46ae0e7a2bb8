// What the CUDA backend plugin (libtt_cuda.so) exports and tt_core's loader (backend/cuda_plugin.cpp)
// looks up with dlsym. A plain C++ header: tt_core never includes <cuda_runtime.h>.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace tt::backend {

// Bumped whenever Backend's virtual interface or this struct changes: a plugin from another build is
// refused instead of calling through a stale vtable.
inline constexpr int kCudaPluginAbi = 2;

struct CudaPluginEntry {
  int abi;
  int (*device_count)();                             // 0 when no driver or device; never throws
  std::unique_ptr<Backend> (*make_backend)(int index);  // throws tt::Error with CUDA's error text
};

}  // namespace tt::backend

extern "C" const tt::backend::CudaPluginEntry* tt_cuda_plugin_entry();
