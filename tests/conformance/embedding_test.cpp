// Embedding forward (scaled table rows plus positions at an offset) and the accumulating backward kernels
// against the reference on every backend; duplicate ids must add up.
#include <catch2/catch.hpp>

#include <cmath>

#include "backend/kernel_fixture.h"
#include "conformance/backends_under_test.h"
#include "support/reference_kernels.h"

using namespace tt;
using tt::test::for_each_backend;
using tt::test::random_floats;
using tt::test::random_ids;
using tt::test::require_close;
using tt::test::to_double;
using tt::test::upload;

TEST_CASE("embedding_forward with and without positions", "[conformance][embedding]") {
  for_each_backend([](backend::Backend& be) {
    const int V = 23, P = 40;
    for (auto [B, T, D] : {std::tuple<int, int, int>{1, 1, 1}, {3, 7, 33}, {3, 5, 37}, {5, 31, 130}}) {
      INFO("B=" << B << " T=" << T << " D=" << D);
      auto table = random_floats(size_t(V) * D, 1), pos = random_floats(size_t(P) * D, 2);
      auto ids = random_ids(size_t(B) * T, 3, 0, V);
      const float scale = std::sqrt(float(D));
      auto tb = upload(be, table), ps = upload(be, pos), id = upload(be, ids);
      auto y = upload(be, std::vector<float>(size_t(B) * T * D));
      for (bool with_pos : {true, false}) {
        const int offset = with_pos ? 4 : 0;
        be.embedding_forward(y.f32(), id.i32(), tb.f32(), with_pos ? ps.f32() : nullptr, scale, B, T, D, offset);
        std::vector<double> e(size_t(B) * T * D);
        reference::embedding_forward(e.data(), ids.data(), table.data(), with_pos ? pos.data() : nullptr, scale, B,
                                     T, D, offset);
        require_close(y.to_host_f32(), e, 1e-6, 1e-6, with_pos ? "with positions" : "without positions");
      }
    }
  });
}

TEST_CASE("embedding_backward accumulates duplicate ids, positions_backward sums over the batch",
          "[conformance][embedding]") {
  for_each_backend([](backend::Backend& be) {
    const int V = 11, B = 4, T = 9, D = 35;
    const int64_t N = int64_t{B} * T;
    auto dt0 = random_floats(size_t(V) * D, 4), dp0 = random_floats(size_t(T) * D, 5), DY = random_floats(N * D, 6);
    auto ids = random_ids(N, 7, 0, 5);  // only 5 distinct ids over 36 tokens: many duplicates
    auto dt = upload(be, dt0), dp = upload(be, dp0), dy = upload(be, DY), id = upload(be, ids);
    be.embedding_backward(dt.f32(), dy.f32(), id.i32(), 0.5f, N, D);
    be.positions_backward(dp.f32(), dy.f32(), B, T, D);
    auto dte = to_double(dt0), dpe = to_double(dp0);
    reference::embedding_backward(dte.data(), DY.data(), ids.data(), 0.5, N, D);
    reference::positions_backward(dpe.data(), DY.data(), B, T, D);
    require_close(dt.to_host_f32(), dte, 1e-5, 1e-5, "dtable");
    require_close(dp.to_host_f32(), dpe, 1e-5, 1e-5, "dpositions");
  });
}
