// The CUDA backend is a plugin (lib/backend/cuda_plugin.cpp): the tools do not link cuBLAS, an explicit
// --device cuda loads it and reports why it cannot be used, and a missing or foreign plugin is named in the
// message. Runs on every host; the CUDA build's cases need no GPU (on a GPU host the no-device case is
// left to tests/cuda).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/run_command.h"
#include "support/tmp_dir.h"

using namespace tt::test;

namespace {

const std::string kTrain = " --preset tiny --layers 1 --d-model 32 --d-ff 64 --heads 2 --vocab-size 24"
                           " --synthetic-steps 1 --batch-size 2 --src-len 4 --tgt-len 4 --quiet";

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

bool gpu_host() { return access("/dev/nvidiactl", F_OK) == 0 || access("/dev/nvidia0", F_OK) == 0; }

}  // namespace

TEST_CASE("cuda plugin: the model tools do not link the CUDA libraries", "[cli]") {
  for (const std::string name : {"tt-train", "tt-translate", "tt-attnviz", "tt-average"}) {
    INFO(name);
    const auto r = run_command("ldd " + quoted(tool(name)));
    REQUIRE(r.status == 0);
    CHECK(contains(r.out, "libc.so"));  // ldd did list the libraries
    CHECK_FALSE(contains(r.out, "libcublas"));
    CHECK_FALSE(contains(r.out, "libcudart"));
  }
}

TEST_CASE("cuda plugin: --device cuda names the reason it cannot run, exit 1", "[cli]") {
  TmpDir dir;
  const std::string train = tool("tt-train") + kTrain + " -o " + quoted(dir.file("run")) + " --device cuda";
  auto r = run_command("TT_CUDA_PLUGIN=" + dir.file("missing/libtt_cuda.so") + " " + train);
  INFO(r.err);
  CHECK(r.status == 1);
  if (TT_TEST_WITH_CUDA) {
    CHECK(contains(r.err, "the CUDA backend (libtt_cuda.so) could not be loaded"));
    CHECK(contains(r.err, dir.file("missing/libtt_cuda.so")));
    CHECK(contains(r.err, "--device cpu"));

    // A library that is not the plugin is refused by name.
    r = run_command("TT_CUDA_PLUGIN=libm.so.6 " + train);
    CHECK(r.status == 1);
    CHECK(contains(r.err, "libm.so.6 is not tt's CUDA plugin"));

    if (!gpu_host()) {  // the real plugin loads (its reason comes from the CUDA runtime, not the loader)
      r = run_command(train);
      CHECK(r.status == 1);
      CHECK_FALSE(contains(r.err, "could not be loaded"));
      CHECK(contains(r.err, "CUDA device"));
      CHECK(contains(r.err, "--device cpu"));
    }
  } else {
    CHECK(contains(r.err, "built without CUDA"));
  }
  CHECK_FALSE(std::filesystem::exists(dir.file("run")));
}

TEST_CASE("cuda plugin: --device auto on a host without a GPU runs on the CPU", "[cli]") {
  if (gpu_host()) return;  // tests/cuda/device_cli_test.cpp covers auto on GPU hosts
  TmpDir dir;
  const auto r = run_command(tool("tt-train") + kTrain + " -o " + quoted(dir.file("run")) + " --device auto");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(std::filesystem::exists(dir.file("run/config.json")));
}
