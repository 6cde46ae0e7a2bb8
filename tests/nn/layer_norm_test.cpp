#include <catch2/catch.hpp>

#include <cmath>

#include "backend/backend.h"
#include "nn/layer_norm.h"
#include "support/grad_check.h"

using namespace tt;
using tensor::Shape;
using tensor::Tensor;

TEST_CASE("layer norm: normalised rows, then gain and bias", "[nn][layer_norm]") {
  auto be = backend::make_backend("cpu", 1);
  nn::ParameterSet params;
  nn::LayerNorm ln;
  ln.declare(params, "ln", 4, 1e-5f);
  params.allocate(*be);
  ln.bind(params);
  params.get("ln.weight").value.copy_from(Tensor::from_host(*be, Shape{4}, std::vector<float>{1, 2, 1, 1}));
  params.get("ln.bias").value.copy_from(Tensor::from_host(*be, Shape{4}, std::vector<float>{0, 0, 0, 1}));
  Tensor x = Tensor::from_host(*be, Shape{1, 4}, std::vector<float>{1, 2, 3, 4});
  Tensor y = Tensor::empty(*be, Shape{1, 4});
  tensor::Arena arena(*be);
  ln.forward(y, x, arena, nullptr);
  auto v = y.to_host_f32();
  const double sd = std::sqrt(1.25 + 1e-5);  // population variance of 1..4 is 1.25
  CHECK(v[0] == Approx(-1.5 / sd).margin(1e-5));
  CHECK(v[1] == Approx(2 * -0.5 / sd).margin(1e-5));
  CHECK(v[2] == Approx(0.5 / sd).margin(1e-5));
  CHECK(v[3] == Approx(1.5 / sd + 1).margin(1e-5));
}

TEST_CASE("layer norm gradients", "[nn][layer_norm][grad]") {
  auto be = backend::make_backend("cpu", 1);
  const int N = 6, D = 12;
  nn::ParameterSet params;
  nn::LayerNorm ln;
  ln.declare(params, "ln", D, 1e-5f);
  params.allocate(*be);
  ln.bind(params);
  test::randomize(params, 3, 1.0f);
  Tensor x = test::random_tensor(*be, Shape{N, D}, 4);
  const auto r = test::random_values(size_t(N) * D, 5);
  tensor::Arena arena(*be);
  auto loss = [&] {
    tensor::ArenaScope scope(arena);
    Tensor y = arena.allocate(Shape{N, D});
    ln.forward(y, x, arena, nullptr);
    return test::dot(y.to_host_f32(), r);
  };
  params.zero_grad();
  nn::LayerNorm::Saved saved;
  Tensor y = Tensor::empty(*be, Shape{N, D});
  ln.forward(y, x, arena, &saved);
  Tensor dy = Tensor::from_host(*be, Shape{N, D}, r);
  Tensor dx = Tensor::empty(*be, Shape{N, D});
  ln.backward(dx, dy, saved);
  auto dxv = dx.to_host_f32();
  auto gv = params.grads().to_host_f32();
  saved = {};
  arena.reset();
  // Small step: LayerNorm of values of O(1) is smooth but strongly curved.
  auto rx = test::check_gradient("dx", x, dxv, test::sample_coords(x.numel(), 40, 1), loss, 1e-3);
  INFO(rx.report);
  CHECK(rx.ok());
  auto rp = test::check_gradient("params", params.values(), gv, test::param_coords(params, 12, 2), loss, 1e-3);
  INFO(rp.report);
  CHECK(rp.ok());
}
