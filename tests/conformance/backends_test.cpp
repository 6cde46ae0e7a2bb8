// The suite itself: on a host with an NVIDIA device, a CUDA build must put the CUDA backend under test. A
// plugin that failed to load would otherwise pass every case by running none of them on the GPU.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "conformance/backends_under_test.h"
#include "util/error.h"

using namespace tt;

TEST_CASE("the CUDA backend is under test wherever an NVIDIA device is present", "[conformance]") {
  std::string names;
  for (const auto& b : test::backends_under_test()) names += " " + b.name;
  WARN("backends under test:" << names);
  const bool gpu_here = std::filesystem::exists("/dev/nvidiactl") || std::filesystem::exists("/dev/nvidia0");
  if (!TT_TEST_WITH_CUDA || !gpu_here) return;  // a CPU-only build, or no GPU: nothing to require
  if (names.find("cuda:0") == std::string::npos) {
    std::string why = "the driver reports no device";
    try {
      backend::make_cuda_backend(0);
    } catch (const Error& e) {
      why = e.what();
    }
    FAIL("an NVIDIA device node is present but CUDA is not under test: " << why);
  }
}
