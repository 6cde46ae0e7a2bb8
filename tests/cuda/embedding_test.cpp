// Embedding gather (scaled, plus positions at an offset) and the scatter-add gradients, against the CPU
// backend; duplicate ids must add up (atomics on the GPU).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "cuda/cuda_fixture.h"

using namespace tt;
using namespace tt::test;

TEST_CASE("cuda embedding forward and backward", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  const int V = 11, D = 37, B = 3, T = 5, P = 20, offset = 4;
  const float scale = std::sqrt(float(D));
  std::vector<float> table = random_floats(size_t(V) * D, 1), positions = random_floats(size_t(P) * D, 2);
  std::vector<int32_t> ids = random_ids(size_t(B) * T, 3, 0, V);
  ids[0] = ids[1] = ids[7] = 4;  // duplicates
  DeviceVector<float> dtable(*gpu, table), dpositions(*gpu, positions);
  DeviceVector<int32_t> dids(*gpu, ids);

  for (bool with_positions : {false, true}) {
    INFO("positions " << with_positions);
    std::vector<float> y(size_t(B) * T * D);
    DeviceVector<float> dy(*gpu, y);
    gpu->embedding_forward(dy.data(), dids.data(), dtable.data(), with_positions ? dpositions.data() : nullptr,
                           scale, B, T, D, offset);
    cpu->embedding_forward(y.data(), ids.data(), table.data(), with_positions ? positions.data() : nullptr, scale,
                           B, T, D, offset);
    check_close(dy.to_host(), y, 1e-6, 1e-6);
  }

  std::vector<float> g = random_floats(size_t(B) * T * D, 4), dtab = random_floats(size_t(V) * D, 5),
                     dpos = random_floats(size_t(P) * D, 6);
  DeviceVector<float> dg(*gpu, g), ddtab(*gpu, dtab), ddpos(*gpu, dpos);
  gpu->embedding_backward(ddtab.data(), dg.data(), dids.data(), scale, int64_t(B) * T, D);
  cpu->embedding_backward(dtab.data(), g.data(), ids.data(), scale, int64_t(B) * T, D);
  check_close(ddtab.to_host(), dtab, 1e-5, 1e-5);
  gpu->positions_backward(ddpos.data(), dg.data(), B, T, D);
  cpu->positions_backward(dpos.data(), g.data(), B, T, D);
  check_close(ddpos.to_host(), dpos, 1e-5, 1e-5);
}
