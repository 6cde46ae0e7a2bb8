// The post-LN sub-layer end (sum = residual + dropout(x + bias), y = layer norm of sum, and its backward)
// on every backend — its fused kernels where it has them, ops' composition of add_bias, dropout_add and
// layer_norm elsewhere — against the reference and finite differences, in place as the layers call it.
#include <catch2/catch.hpp>

#include "conformance/backends_under_test.h"
#include "support/reference_kernels.h"
#include "support/residual_norm_cases.h"

using namespace tt;
using namespace tt::test::residual_norm;
using tt::test::for_each_backend;
using tt::test::random_floats;
using tt::test::require_close;

TEST_CASE("residual layer norm, fused where the backend fuses it and composed everywhere, matches the reference",
          "[conformance][layer_norm]") {
  for_each_backend([](backend::Backend& be) {
    for (const bool fused : {false, true}) {
      if (fused && !residual_norm_path(be)) continue;
      for (const Case& c : kCases) {
        INFO((fused ? "fused" : "composed") << " N=" << c.N << " D=" << c.D << " p=" << c.p << " bias=" << c.bias);
        const Data d(c, 3);
        const Result a = run(be, c, d.X, d.R, d.bias, d.G, d.Bt, d.DY, fused);

        const int64_t n = c.N * c.D;
        std::vector<double> y(n), sum(n), mean(c.N), rstd(c.N);
        reference::residual_layer_norm_forward(y.data(), sum.data(), mean.data(), rstd.data(), d.X.data(),
                                               c.bias ? d.bias.data() : nullptr, d.R.data(), d.G.data(), d.Bt.data(),
                                               c.N, c.D, kEps, c.p, kKey);
        require_close(a.sum, sum, 1e-6, 1e-6, "sum");
        require_close(a.y, y, 1e-4, 1e-5, "y");
        require_close(a.mean, mean, 1e-5, 1e-6, "mean");
        require_close(a.rstd, rstd, 1e-4, 1e-6, "rstd");
        std::vector<double> dres(n), dx(n), dg(c.D), db(c.D), dbias(c.D);
        reference::residual_layer_norm_backward(dres.data(), dx.data(), dg.data(), db.data(), dbias.data(), d.DY.data(),
                                                a.sum.data(), d.G.data(), c.N, c.D, kEps, c.p, kKey);
        for (int j = 0; j < c.D; ++j) {  // parameter gradients accumulate onto what they held
          dg[j] += 0.5;
          db[j] += -0.25;
          dbias[j] += 1.0;
      }
      require_close(a.dres, dres, 1e-4, 1e-4, "dres (in place over dy)");
      require_close(a.dx, dx, 1e-4, 1e-4, "dx");
      require_close(a.dgamma, dg, 1e-4, 1e-4, "dgamma");
      require_close(a.dbeta, db, 1e-5, 1e-4, "dbeta");
      if (c.bias) require_close(a.dbias, dbias, 1e-5, 1e-4, "dbias");
      else CHECK(a.dbias == std::vector<float>(c.D, 1.0f));  // untouched without a bias
      }
    }
  });
}

TEST_CASE("residual layer norm backward agrees with finite differences of its forward",
          "[conformance][layer_norm][grad]") {
  for_each_backend([](backend::Backend& be) {
    const Case c{3, 11, 0.3f, true};
    const Data d(c, 17);
    const std::vector<float> W = random_floats(c.N * c.D, 23);  // loss = sum(W * y), so dy = W
    const Result a = run(be, c, d.X, d.R, d.bias, d.G, d.Bt, W, residual_norm_path(be));
    auto loss = [&](const Data& v) {
      const Result r = run(be, c, v.X, v.R, v.bias, v.G, v.Bt, W, residual_norm_path(be));
      double l = 0.0;
      for (size_t i = 0; i < W.size(); ++i) l += double(W[i]) * r.y[i];
      return l;
    };
    const float h = 1e-2f;
    auto check = [&](std::vector<float> Data::*field, const std::vector<float>& grad, double offset, const char* what) {
      for (size_t i = 0; i < (d.*field).size(); ++i) {
        Data plus = d, minus = d;
        (plus.*field)[i] += h;
        (minus.*field)[i] -= h;
        INFO(what << " element " << i);
        CHECK(grad[i] - offset == Approx((loss(plus) - loss(minus)) / (2.0 * h)).margin(2e-3).epsilon(2e-2));
      }
    };
    check(&Data::X, a.dx, 0.0, "dx");
    check(&Data::R, a.dres, 0.0, "dresidual");
    check(&Data::bias, a.dbias, 1.0, "dbias");  // run() starts the parameter gradients at 1, 0.5, -0.25
    check(&Data::G, a.dgamma, 0.5, "dgamma");
    check(&Data::Bt, a.dbeta, -0.25, "dbeta");
  });
}
