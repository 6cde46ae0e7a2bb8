// The fused post-LN sub-layer end (residual_layer_norm_forward/backward) on every instruction-set variant:
// the reference, the default composition of the kernels it fuses, finite differences of the forward, and
// the same bits on 1 and 2 threads (parameter gradients included), in place as the layers call it.
#include <catch2/catch.hpp>

#include "backend/cpu/cpu_backend.h"
#include "backend/kernel_fixture.h"
#include "ops/layer_norm.h"
#include "support/reference_kernels.h"

using namespace tt;
using tt::test::random_floats;
using tt::test::require_close;
using tt::test::upload;

namespace {

const backend::DropoutKey kKey{0xfeed, 5};
constexpr float kEps = 1e-5f;

struct Case {
  int64_t N;
  int D;
  float p;
  bool bias;
};

struct Result {
  std::vector<float> y, sum, mean, rstd, dres, dx, dgamma, dbeta, dbias;
};

// Forward with sum over x (in place) and backward with dres over dy, as residual_block_* call them; with_mask:
// the dropout flags kept in between (else backward draws them again).
Result run(backend::Backend& be, const Case& c, const std::vector<float>& X, const std::vector<float>& R,
           const std::vector<float>& bias, const std::vector<float>& G, const std::vector<float>& Bt,
           const std::vector<float>& DY, bool fused = true, bool with_mask = true) {
  const int64_t n = c.N * c.D;
  auto x = upload(be, X), r = upload(be, R), b = upload(be, bias), g = upload(be, G), bt = upload(be, Bt);
  auto y = upload(be, std::vector<float>(n)), mean = upload(be, std::vector<float>(c.N)),
       rstd = upload(be, std::vector<float>(c.N));
  auto dy = upload(be, DY), dx = upload(be, std::vector<float>(n));
  auto mask = tensor::Tensor::empty(be, tensor::Shape{n}, tensor::DType::u8);  // flags land here; garbage before
  const std::vector<uint8_t> garbage(size_t(n), 0xAB);
  be.copy_from_host(mask.u8(), garbage.data(), garbage.size());
  uint8_t* mp = mask.u8();
  auto dg = upload(be, std::vector<float>(c.D, 0.5f)), db = upload(be, std::vector<float>(c.D, -0.25f)),
       dbias = upload(be, std::vector<float>(c.D, 1.0f));
  const float* bp = c.bias ? b.f32() : nullptr;
  float* dbp = c.bias ? dbias.f32() : nullptr;
  if (fused) {
    be.residual_layer_norm_forward(y.f32(), x.f32(), mean.f32(), rstd.f32(), with_mask ? mp : nullptr, x.f32(), bp,
                                   r.f32(), g.f32(), bt.f32(), c.N, c.D, kEps, c.p, kKey);
    be.residual_layer_norm_backward(dy.f32(), dx.f32(), dg.f32(), db.f32(), dbp, dy.f32(), x.f32(), mean.f32(),
                                    rstd.f32(), with_mask ? mp : nullptr, g.f32(), c.N, c.D, c.p, kKey);
  } else {
    ops::composed_residual_layer_norm_forward(be, y.f32(), x.f32(), mean.f32(), rstd.f32(), x.f32(), bp, r.f32(),
                                              g.f32(), bt.f32(), c.N, c.D, kEps, c.p, kKey);
    ops::composed_residual_layer_norm_backward(be, dy.f32(), dx.f32(), dg.f32(), db.f32(), dbp, dy.f32(), x.f32(),
                                               mean.f32(), rstd.f32(), g.f32(), c.N, c.D, c.p, kKey);
  }
  return Result{y.to_host_f32(),  x.to_host_f32(),  mean.to_host_f32(), rstd.to_host_f32(), dy.to_host_f32(),
                dx.to_host_f32(), dg.to_host_f32(), db.to_host_f32(),   dbias.to_host_f32()};
}

struct Data {
  std::vector<float> X, R, bias, G, Bt, DY;
  explicit Data(const Case& c, uint32_t seed)
      : X(random_floats(c.N * c.D, seed, -2.0f, 2.0f)), R(random_floats(c.N * c.D, seed + 1, -1.0f, 3.0f)),
        bias(random_floats(c.D, seed + 2)), G(random_floats(c.D, seed + 3, 0.5f, 1.5f)), Bt(random_floats(c.D, seed + 4)),
        DY(random_floats(c.N * c.D, seed + 5)) {}
};

const Case kCases[] = {{1, 1, 0.0f, true},    {5, 33, 0.2f, true},   {70, 128, 0.1f, true},
                       {300, 129, 0.0f, false}, {33, 1100, 0.3f, true}, {2048, 128, 0.1f, true}};

}  // namespace

TEST_CASE("residual_layer_norm matches the reference on every ISA, the same bits on 1 and 2 threads",
          "[backend][layer_norm]") {
  for (const std::string& isa : backend::cpu::supported_isas()) {
    for (const Case& c : kCases) {
      INFO("isa " << isa << " N=" << c.N << " D=" << c.D << " p=" << c.p << " bias=" << c.bias);
      const Data d(c, 3);
      backend::cpu::CpuBackend one(1, isa), two(2, isa);
      const Result a = run(one, c, d.X, d.R, d.bias, d.G, d.Bt, d.DY), b = run(two, c, d.X, d.R, d.bias, d.G, d.Bt, d.DY);
      CHECK(a.y == b.y);
      CHECK(a.dres == b.dres);
      CHECK(a.dx == b.dx);
      CHECK(a.dgamma == b.dgamma);
      CHECK(a.dbeta == b.dbeta);
      CHECK(a.dbias == b.dbias);
      const Result m = run(two, c, d.X, d.R, d.bias, d.G, d.Bt, d.DY, true, false);  // flags drawn again
      CHECK(m.dx == a.dx);
      CHECK(m.dgamma == a.dgamma);

      const int64_t n = c.N * c.D;
      std::vector<double> y(n), sum(n), mean(c.N), rstd(c.N);
      reference::residual_layer_norm_forward(y.data(), sum.data(), mean.data(), rstd.data(), d.X.data(),
                                             c.bias ? d.bias.data() : nullptr, d.R.data(), d.G.data(), d.Bt.data(), c.N,
                                             c.D, kEps, c.p, kKey);
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
}

TEST_CASE("residual_layer_norm agrees with the default add_bias, dropout_add, layer_norm composition",
          "[backend][layer_norm]") {
  backend::cpu::CpuBackend be(2);
  for (const Case& c : kCases) {
    INFO("N=" << c.N << " D=" << c.D << " p=" << c.p);
    const Data d(c, 9);
    const Result f = run(be, c, d.X, d.R, d.bias, d.G, d.Bt, d.DY), g = run(be, c, d.X, d.R, d.bias, d.G, d.Bt, d.DY, false);
    auto close = [](const std::vector<float>& a, const std::vector<float>& b, const char* what) {
      require_close(a, std::vector<double>(b.begin(), b.end()), 1e-4, 1e-4, what);
    };
    close(f.y, g.y, "y");
    close(f.sum, g.sum, "sum");
    close(f.dres, g.dres, "dres");
    close(f.dx, g.dx, "dx");
    close(f.dgamma, g.dgamma, "dgamma");
    close(f.dbeta, g.dbeta, "dbeta");
    close(f.dbias, g.dbias, "dbias");
  }
}

TEST_CASE("residual_layer_norm_backward agrees with finite differences of its forward", "[backend][layer_norm][grad]") {
  backend::cpu::CpuBackend be(2);
  const Case c{3, 11, 0.3f, true};
  const Data d(c, 17);
  const std::vector<float> W = random_floats(c.N * c.D, 23);  // loss = sum(W * y), so dy = W
  const Result a = run(be, c, d.X, d.R, d.bias, d.G, d.Bt, W);
  auto loss = [&](const Data& v) {
    const Result r = run(be, c, v.X, v.R, v.bias, v.G, v.Bt, W);
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
}
