// Row-invariant x W^T packs W once (backend/cpu/packed_gemm.h): the packed copy must follow W when W
// changes in place (a training step between two decodes), and tail rows/columns must be right.
#include <catch2/catch.hpp>

#include "backend/backend.h"
#include "backend/kernel_fixture.h"
#include "support/reference_kernels.h"

using namespace tt;
using tt::test::random_floats;
using tt::test::upload;

namespace {

void check_product(const std::vector<float>& y, const std::vector<float>& x, const std::vector<float>& w, int M,
                   int N, int K) {
  std::vector<double> expected(static_cast<size_t>(M) * N, 0.0);
  reference::gemm(false, true, M, N, K, 1.0f, x.data(), K, w.data(), K, 0.0f, expected.data(), N);
  for (size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(expected[i]).margin(1e-4 * K));
}

}  // namespace

TEST_CASE("row-invariant gemm re-packs weights changed in place", "[backend][gemm]") {
  const int M = 37, N = 300, K = 64;  // a 5-row tail tile and a 44-column tail block
  auto be = backend::make_backend("cpu", 2);
  REQUIRE(be->set_row_invariant(true));
  auto x = random_floats(static_cast<size_t>(M) * K, 31);
  auto w1 = random_floats(static_cast<size_t>(N) * K, 32), w2 = random_floats(static_cast<size_t>(N) * K, 33);
  auto a = upload(*be, x), b = upload(*be, w1);
  auto c = upload(*be, std::vector<float>(static_cast<size_t>(M) * N, 0.0f));
  be->gemm(false, true, M, N, K, 1.0f, a.f32(), K, b.f32(), K, 0.0f, c.f32(), N);
  check_product(c.to_host_f32(), x, w1, M, N, K);
  // Same address, new values (as after an optimizer step): the product must use the new weights.
  be->copy_from_host(b.f32(), w2.data(), w2.size() * sizeof(float));
  be->gemm(false, true, M, N, K, 1.0f, a.f32(), K, b.f32(), K, 0.0f, c.f32(), N);
  check_product(c.to_host_f32(), x, w2, M, N, K);
}
