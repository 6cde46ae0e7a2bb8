// Row gathers (beam reordering) against the CPU backend, with repeated and out-of-order indices.
#include <catch2/catch.hpp>

#include <vector>

#include "cuda/cuda_fixture.h"

using namespace tt;
using namespace tt::test;

TEST_CASE("cuda gather_rows", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  const int64_t rows = 10, D = 37, N = 13;
  std::vector<float> src = random_floats(size_t(rows * D), 1), dst(size_t(N * D));
  std::vector<int32_t> index = random_ids(size_t(N), 2, 0, int32_t(rows));
  index[0] = index[1] = 9;
  DeviceVector<float> dsrc(*gpu, src), ddst(*gpu, dst);
  DeviceVector<int32_t> dindex(*gpu, index);
  gpu->gather_rows(ddst.data(), dsrc.data(), dindex.data(), N, D);
  cpu->gather_rows(dst.data(), src.data(), index.data(), N, D);
  check_close(ddst.to_host(), dst, 0, 0);
}
