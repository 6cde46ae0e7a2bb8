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

namespace {

// "cuda" -> 0, "cuda:3" -> 3; -1 for anything else.
int cuda_index(const std::string& device) {
  if (device == "cuda") return 0;
  if (device.rfind("cuda:", 0) != 0 || device.size() == 5 || device.size() > 9) return -1;
  for (size_t i = 5; i < device.size(); ++i)
    if (device[i] < '0' || device[i] > '9') return -1;
  return std::stoi(device.substr(5));
}

}  // namespace

std::unique_ptr<Backend> make_backend(const std::string& device, int threads) {
  if (device == "cpu") return std::make_unique<cpu::CpuBackend>(threads);
  if (const int index = cuda_index(device); index >= 0) {
#ifdef TT_WITH_CUDA
    const int count = cuda_device_count();
    if (count == 0) return make_cuda_backend(index);  // throws the reason: no plugin, no CUDA library, no driver
    if (index >= count)
      throw Error("device " + device + " does not exist: " + std::to_string(count) + " CUDA device(s) visible",
                  count > 1   ? "use --device cuda:0 .. cuda:" + std::to_string(count - 1)
                  : count > 0 ? std::string("use --device cuda:0 (or --device cuda)")
                              : std::string("use --device cpu"));
    return make_cuda_backend(index);
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
  throw ConfigError("unknown device '" + device + "'; expected cpu, cuda, cuda:N or auto",
                    "use --device cpu, --device cuda or --device auto");
}

}  // namespace tt::backend
