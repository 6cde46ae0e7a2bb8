// The CUDA backend as tt_core sees it: loaded from libtt_cuda.so on first use (backend/cuda_plugin.cpp), so
// that a CPU run neither maps cuBLAS nor needs the CUDA libraries installed.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace tt::backend {

// Number of visible CUDA devices: 0 when this host has no NVIDIA device node, the plugin or the CUDA
// libraries cannot be loaded, or the driver reports none (never throws).
int cuda_device_count();
// A backend on device `index`; throws tt::Error saying why when the plugin cannot be loaded or the device
// cannot be used.
std::unique_ptr<Backend> make_cuda_backend(int index);

}  // namespace tt::backend
