// Adam with bias correction and decoupled weight decay, several steps, against the CPU backend.
#include <catch2/catch.hpp>

#include <vector>

#include "cuda/cuda_fixture.h"

using namespace tt;
using namespace tt::test;

TEST_CASE("cuda adam_step", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  for (float weight_decay : {0.0f, 0.01f}) {
    INFO("weight decay " << weight_decay);
    const int64_t n = 10007;
    std::vector<float> param = random_floats(n, 1), m(n, 0.0f), v(n, 0.0f);
    DeviceVector<float> dparam(*gpu, param), dm(*gpu, m), dv(*gpu, v);
    for (int64_t step = 1; step <= 3; ++step) {
      std::vector<float> grad = random_floats(n, 10 + uint32_t(step));
      DeviceVector<float> dgrad(*gpu, grad);
      gpu->adam_step(dparam.data(), dm.data(), dv.data(), dgrad.data(), n, 1e-3f, 0.9f, 0.98f, 1e-9f, weight_decay,
                     step);
      cpu->adam_step(param.data(), m.data(), v.data(), grad.data(), n, 1e-3f, 0.9f, 0.98f, 1e-9f, weight_decay,
                     step);
    }
    check_close(dparam.to_host(), param, 1e-6, 1e-7);
    check_close(dm.to_host(), m, 1e-5, 1e-7);
    check_close(dv.to_host(), v, 1e-5, 1e-8);
  }
}
