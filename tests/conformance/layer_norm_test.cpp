// layer_norm_forward/backward against the reference on every backend, and backward against finite
// differences of forward.
#include <catch2/catch.hpp>
#include <functional>

#include "backend/kernel_fixture.h"
#include "conformance/backends_under_test.h"
#include "support/reference_kernels.h"

using namespace tt;
using tt::test::for_each_backend;
using tt::test::random_floats;
using tt::test::require_close;
using tt::test::to_double;
using tt::test::upload;

TEST_CASE("layer_norm forward and backward match the reference", "[conformance][layer_norm]") {
  for_each_backend([&](backend::Backend& be) {
    const float eps = 1e-5f;
    for (auto [N, D] : {std::pair<int64_t, int>{1, 1}, {1, 7}, {5, 33}, {300, 129}, {64, 512}, {300, 1027},
                        {5000, 512}}) {  // the last span several row chunks of a parameter-gradient reduction
      INFO("N=" << N << " D=" << D);
      auto X = random_floats(N * D, 1, -2.0f, 3.0f), G = random_floats(D, 2, 0.5f, 1.5f), Bt = random_floats(D, 3);
      auto x = upload(be, X), g = upload(be, G), b = upload(be, Bt);
      auto y = upload(be, std::vector<float>(N * D)), mean = upload(be, std::vector<float>(N)),
           rstd = upload(be, std::vector<float>(N));
      be.layer_norm_forward(y.f32(), mean.f32(), rstd.f32(), x.f32(), g.f32(), b.f32(), N, D, eps);
      std::vector<double> ye(N * D), me(N), re(N);
      reference::layer_norm_forward(ye.data(), me.data(), re.data(), X.data(), G.data(), Bt.data(), N, D, eps);
      require_close(y.to_host_f32(), ye, 1e-5, 1e-5, "y");
      require_close(mean.to_host_f32(), me, 1e-5, 1e-6, "mean");
      require_close(rstd.to_host_f32(), re, 1e-4, 1e-6, "rstd");  // D == 1: rstd = 1/sqrt(eps), large

      auto DY = random_floats(N * D, 4);
      auto dg0 = random_floats(D, 5), db0 = random_floats(D, 6);
      auto dy = upload(be, DY), dg = upload(be, dg0), db = upload(be, db0);
      be.layer_norm_backward(dy.f32(), dg.f32(), db.f32(), dy.f32(), x.f32(), mean.f32(), rstd.f32(), g.f32(), N, D);
      std::vector<double> dxe(N * D), dge(D), dbe(D);
      reference::layer_norm_backward(dxe.data(), dge.data(), dbe.data(), DY.data(), X.data(), G.data(), N, D, eps);
      for (int j = 0; j < D; ++j) {
        dge[j] += dg0[j];  // parameter grads accumulate
        dbe[j] += db0[j];
      }
      require_close(dy.to_host_f32(), dxe, 1e-4, 1e-4, "dx (in place over dy)");
      // Parameter gradients sum N rows in float: rounding grows with N.
      require_close(dg.to_host_f32(), dge, 1e-4, 1e-4 + 2e-8 * N, "dgamma");
      require_close(db.to_host_f32(), dbe, 1e-5, 1e-5 + 2e-8 * N, "dbeta");
    }
  });
}

TEST_CASE("layer_norm_backward agrees with finite differences of layer_norm_forward",
          "[conformance][layer_norm][grad]") {
  for_each_backend([&](backend::Backend& be) {
    const int64_t N = 3;
    const int D = 11;
    const float eps = 1e-5f;
    auto X = random_floats(N * D, 7, -1.0f, 1.0f), G = random_floats(D, 8, 0.5f, 1.5f), Bt = random_floats(D, 9);
    auto W = random_floats(N * D, 10);  // L = sum(W * y)
    auto loss = [&](const std::vector<float>& xv, const std::vector<float>& gv, const std::vector<float>& bv) {
      auto x = upload(be, xv), g = upload(be, gv), b = upload(be, bv);
      auto y = upload(be, std::vector<float>(N * D)), m = upload(be, std::vector<float>(N)),
           r = upload(be, std::vector<float>(N));
      be.layer_norm_forward(y.f32(), m.f32(), r.f32(), x.f32(), g.f32(), b.f32(), N, D, eps);
      auto yv = y.to_host_f32();
      double l = 0.0;
      for (size_t i = 0; i < yv.size(); ++i) l += double(W[i]) * yv[i];
      return l;
    };
    auto x = upload(be, X), g = upload(be, G), b = upload(be, Bt);
    auto y = upload(be, std::vector<float>(N * D)), m = upload(be, std::vector<float>(N)),
         r = upload(be, std::vector<float>(N));
    be.layer_norm_forward(y.f32(), m.f32(), r.f32(), x.f32(), g.f32(), b.f32(), N, D, eps);
    auto dx = upload(be, W), dg = upload(be, std::vector<float>(D, 0.0f)), db = upload(be, std::vector<float>(D, 0.0f));
    be.layer_norm_backward(dx.f32(), dg.f32(), db.f32(), dx.f32(), x.f32(), m.f32(), r.f32(), g.f32(), N, D);
    auto dxv = dx.to_host_f32(), dgv = dg.to_host_f32(), dbv = db.to_host_f32();

    const float h = 1e-2f;
    auto fd = [&](std::vector<float>& v, size_t i, const std::function<double()>& f) {
      float old = v[i];
      v[i] = old + h;
      double lp = f();
      v[i] = old - h;
      double lm = f();
      v[i] = old;
      return (lp - lm) / (2.0 * h);
    };
    auto f = [&] { return loss(X, G, Bt); };
    for (size_t i = 0; i < X.size(); ++i) CHECK(dxv[i] == Approx(fd(X, i, f)).margin(2e-3).epsilon(1e-2));
    for (int j = 0; j < D; ++j) {
      CHECK(dgv[j] == Approx(fd(G, j, f)).margin(2e-3).epsilon(1e-2));
      CHECK(dbv[j] == Approx(fd(Bt, j, f)).margin(2e-3).epsilon(1e-2));
    }
  });
}
