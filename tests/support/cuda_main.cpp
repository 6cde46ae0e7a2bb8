// The Catch2 runner of the CUDA tests (tt_test_cuda). On a host without a visible CUDA device it runs
// nothing and exits 77, which CTest reports as skipped (SKIP_RETURN_CODE): never passed, never failed.
// Listing (which catch_discover_tests does at build time, on any host) and --help still work there.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include "backend/cuda/cuda_factory.h"

int main(int argc, char* argv[]) {
  Catch::Session session;
  if (const int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  const Catch::ConfigData& config = session.configData();
  const bool runs_tests = !(config.listTests || config.listTestNamesOnly || config.listTags ||
                            config.listReporters || config.showHelp || config.libIdentify);
  if (runs_tests && tt::backend::cuda_device_count() == 0) {
    std::fprintf(stderr, "%s: no CUDA device is visible: CUDA tests skipped (exit 77); run them on a GPU host\n",
                 argv[0]);
    return 77;
  }
  return session.run();
}
