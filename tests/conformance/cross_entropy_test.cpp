// Fused label-smoothed cross-entropy on every backend: loss, nll and gradient against the reference; the
// gradient against finite differences of the loss; ignored (padding) rows contribute nothing.
#include <catch2/catch.hpp>

#include "backend/kernel_fixture.h"
#include "conformance/backends_under_test.h"
#include "support/reference_kernels.h"

using namespace tt;
using tt::test::for_each_backend;
using tt::test::random_floats;
using tt::test::require_close;
using tt::test::upload;

TEST_CASE("cross_entropy_forward_backward matches the reference", "[conformance][cross_entropy]") {
  for_each_backend([&](backend::Backend& be) {
    for (auto [N, V] : {std::pair<int64_t, int>{1, 2}, {7, 33}, {37, 1001}, {67, 8001}}) {
      for (float eps : {0.0f, 0.1f}) {
        INFO("N=" << N << " V=" << V << " eps=" << eps);
        auto X = random_floats(N * V, 1, -6.0f, 6.0f);
        auto T = tt::test::random_ids(N, 2, 0, V);
        const int32_t ignore = V > 2 ? 1 : -1;
        T[0] = ignore;  // a padding row
        auto x = upload(be, X);
        auto t = upload(be, T);
        auto loss = upload(be, std::vector<float>(N, -1.0f)), nll = upload(be, std::vector<float>(N, -1.0f));
        const float gs = 0.125f;
        be.cross_entropy_forward_backward(loss.f32(), nll.f32(), x.f32(), t.i32(), N, V, eps, ignore, gs);
        std::vector<double> le(N), ne(N), ge(N * V);
        reference::cross_entropy_forward_backward(le.data(), ne.data(), ge.data(), X.data(), T.data(), N, V, eps,
                                                  ignore, gs);
        require_close(loss.to_host_f32(), le, 1e-5, 1e-5, "loss");
        require_close(nll.to_host_f32(), ne, 1e-5, 1e-5, "nll");
        require_close(x.to_host_f32(), ge, 1e-4, 1e-7, "grad");
        CHECK(loss.to_host_f32()[0] == 0.0f);
        CHECK(nll.to_host_f32()[0] == 0.0f);
        auto g = x.to_host_f32();
        for (int k = 0; k < V; ++k) REQUIRE(g[k] == 0.0f);
      }
    }
  });
}

TEST_CASE("cross-entropy gradient agrees with finite differences of the loss", "[conformance][cross_entropy][grad]") {
  for_each_backend([&](backend::Backend& be) {
    const int64_t N = 3;
    const int V = 13;
    const float eps = 0.1f, gs = 0.7f;
    auto X = random_floats(N * V, 3, -2.0f, 2.0f);
    std::vector<int32_t> T{4, 0, 12};
    auto t = upload(be, T);
    auto run = [&](const std::vector<float>& xv, std::vector<float>* grad) {
      auto x = upload(be, xv);
      auto loss = upload(be, std::vector<float>(N)), nll = upload(be, std::vector<float>(N));
      be.cross_entropy_forward_backward(loss.f32(), nll.f32(), x.f32(), t.i32(), N, V, eps, -1, gs);
      if (grad) *grad = x.to_host_f32();
      double total = 0.0;
      for (float l : loss.to_host_f32()) total += l;
      return gs * total;
    };
    std::vector<float> G;
    run(X, &G);
    const float h = 1e-2f;
    for (size_t i = 0; i < X.size(); ++i) {
      auto xp = X, xm = X;
      xp[i] += h;
      xm[i] -= h;
      CHECK(G[i] == Approx((run(xp, nullptr) - run(xm, nullptr)) / (2.0 * h)).margin(1e-3).epsilon(1e-2));
    }
  });
}
