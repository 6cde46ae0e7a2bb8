// The CPU embedding gradient under OpenMP nesting. Its values against the reference, on every backend:
// tests/conformance/embedding_test.cpp.
#include <catch2/catch.hpp>
#include <omp.h>

#include "backend/backend.h"
#include "backend/kernel_fixture.h"
#include "support/reference_kernels.h"

using namespace tt;
using tt::test::random_floats;
using tt::test::require_close;
using tt::test::upload;

TEST_CASE("embedding_backward gives every row its gradient when OpenMP grants fewer threads", "[backend][embedding]") {
  // Called from inside an active parallel region, the kernel's own region is nested and gets one thread
  // (max active levels 1): rows must not be split by the thread count that was asked for.
  auto be = backend::make_backend("cpu", 2);
  const int V = 16, D = 64;
  const int64_t N = 2048;  // enough work for the kernel to ask for 2 threads
  auto DY = random_floats(N * D, 8);
  auto ids = tt::test::random_ids(N, 9, 0, V);
  auto dt = upload(*be, std::vector<float>(size_t(V) * D)), dy = upload(*be, DY);
  auto id = upload(*be, ids);
  const int saved_levels = omp_get_max_active_levels();
  omp_set_max_active_levels(1);
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 0) be->embedding_backward(dt.f32(), dy.f32(), id.i32(), 1.0f, N, D);
  }
  omp_set_max_active_levels(saved_levels);
  std::vector<double> e(size_t(V) * D, 0.0);
  reference::embedding_backward(e.data(), DY.data(), ids.data(), 1.0, N, D);
  require_close(dt.to_host_f32(), e, 1e-5, 1e-5, "dtable in a nested region");
}
