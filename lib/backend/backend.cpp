// make_backend: the device factory. The only file in tt with #ifdef TT_WITH_CUDA.
#include "backend/backend.h"

#include "backend/cpu/cpu_backend.h"
#include "util/error.h"

#ifdef TT_WITH_CUDA
#include "backend/cuda/cuda_factory.h"
#endif

namespace tt::backend {

bool cuda_available() {
#ifdef TT_WITH_CUDA
  return cuda_device_count() > 0;
#else
  return false;
#endif
}

std::unique_ptr<Backend> make_backend(const std::string& device, int threads) {
  if (device == "cpu") return std::make_unique<cpu::CpuBackend>(threads);
  if (device == "cuda") {
#ifdef TT_WITH_CUDA
    return make_cuda_backend(0);
#else
    throw Error("tt was built without CUDA; rebuild with -DTT_WITH_CUDA=ON or use --device cpu");
#endif
  }
  if (device == "auto") {
    if (cuda_available()) {
#ifdef TT_WITH_CUDA
      return make_cuda_backend(0);
#endif
    }
    return std::make_unique<cpu::CpuBackend>(threads);
  }
  throw ConfigError("unknown device '" + device + "'; expected one of cpu|cuda|auto",
                    "use --device cpu, --device cuda or --device auto");
}

}  // namespace tt::backend
