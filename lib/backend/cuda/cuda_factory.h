// Entry points of the CUDA backend (target tt_cuda) that backend.cpp calls when built with TT_WITH_CUDA.
// A plain C++ header: tt_core never includes <cuda_runtime.h>.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace tt::backend {

// Number of visible CUDA devices (0 when the driver or a device is missing; never throws).
int cuda_device_count();
// A backend on device `index`; throws tt::Error with the CUDA error text when it cannot be created.
std::unique_ptr<Backend> make_cuda_backend(int index);

}  // namespace tt::backend
