// The CUDA backend is a plugin, libtt_cuda.so, opened on first use: linked into every tool it would map
// cuBLAS on each start (~200 MB resident, twice the start-up time of a CPU run) and make the CUDA
// libraries a dependency of machines that have no GPU.
//
// Where it is looked for: $TT_CUDA_PLUGIN if set, else <directory of the program>/../lib/tt/ (the build
// tree and an installed prefix alike), else the dynamic linker's search path.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "backend/cuda/cuda_factory.h"
#include "backend/cuda/cuda_plugin_abi.h"
#include "util/error.h"

namespace tt::backend {
namespace {

struct Plugin {
  const CudaPluginEntry* entry = nullptr;
  std::string error;  // why it could not be loaded
};

std::vector<std::string> candidates() {
  if (const char* path = std::getenv("TT_CUDA_PLUGIN"); path && *path) return {path};
  std::vector<std::string> paths;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) paths.push_back((exe.parent_path() / "../lib/tt/libtt_cuda.so").lexically_normal().string());
  paths.emplace_back("libtt_cuda.so");
  return paths;
}

void note(std::string& errors, const std::string& why) { errors += (errors.empty() ? "" : "; ") + why; }

Plugin load() {
  Plugin plugin;
  for (const auto& path : candidates()) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      note(plugin.error, dlerror());  // dlerror names the path, or the CUDA library it lacks
      continue;
    }
    using EntryFn = const CudaPluginEntry* (*)();
    auto entry_fn = reinterpret_cast<EntryFn>(dlsym(handle, "tt_cuda_plugin_entry"));
    if (!entry_fn) {
      note(plugin.error, path + " is not tt's CUDA plugin (no tt_cuda_plugin_entry)");
      dlclose(handle);
      continue;
    }
    const CudaPluginEntry* entry = entry_fn();
    if (entry->abi != kCudaPluginAbi) {
      note(plugin.error, path + " is from another tt build (plugin ABI " + std::to_string(entry->abi) +
                             ", this tool " + std::to_string(kCudaPluginAbi) + ")");
      dlclose(handle);
      continue;
    }
    // The loaded plugin stays open for the life of the process: its backends' code lives there.
    plugin.entry = entry;
    plugin.error.clear();
    return plugin;
  }
  return plugin;
}

const Plugin& plugin() {
  static const Plugin loaded = load();  // dlopen's own state is process-wide; so is this cache of it
  return loaded;
}

// Without an NVIDIA device node (or WSL's /dev/dxg) there is no GPU to find: skip loading cuBLAS at all,
// which keeps `--device auto` (the default) as cheap as `--device cpu` on CPU hosts.
bool nvidia_device_node_present() {
  return access("/dev/nvidiactl", F_OK) == 0 || access("/dev/nvidia0", F_OK) == 0 || access("/dev/dxg", F_OK) == 0;
}

}  // namespace

int cuda_device_count() {
  if (!std::getenv("TT_CUDA_PLUGIN") && !nvidia_device_node_present()) return 0;
  const Plugin& p = plugin();
  return p.entry ? p.entry->device_count() : 0;
}

std::unique_ptr<Backend> make_cuda_backend(int index) {
  const Plugin& p = plugin();
  if (!p.entry)
    throw Error("the CUDA backend (libtt_cuda.so) could not be loaded: " + p.error,
                "install the CUDA runtime and cuBLAS (scripts/gpu-deps.sh), point TT_CUDA_PLUGIN at libtt_cuda.so, "
                "or use --device cpu");
  return p.entry->make_backend(index);
}

}  // namespace tt::backend
