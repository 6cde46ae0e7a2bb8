// bf16 training on CUDA (cuBLASLt products, fp32 master weights and Adam) against fp32 on CUDA: the checks
// every backend passes (support/bf16_training_checks.h, which tests/train runs on the CPU).
#include <catch2/catch.hpp>

#include "cuda/cuda_fixture.h"
#include "support/bf16_training_checks.h"

using namespace tt;
using namespace tt::test;

namespace {

std::unique_ptr<backend::Backend> gpu_backend(bool bf16) {
  auto gpu = require_cuda();
  if (bf16) REQUIRE(gpu->set_matmul_precision(backend::MatmulPrecision::bf16));
  return gpu;
}

}  // namespace

TEST_CASE("cuda bf16: one training step's loss and gradients are within bf16 tolerance of fp32", "[cuda]") {
  check_bf16_step_against_fp32(gpu_backend);
}

TEST_CASE("cuda bf16: 300 steps of the copy task follow the fp32 loss curve", "[cuda]") {
  check_bf16_copy_task_curve(gpu_backend);
}
