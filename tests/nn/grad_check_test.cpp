// The gradient checker itself must reject wrong gradients, or every other check in tests/nn proves nothing.
#include <catch2/catch.hpp>

#include "backend/backend.h"
#include "support/grad_check.h"

#include <algorithm>

using namespace tt;

TEST_CASE("grad check accepts the exact gradient and rejects near misses", "[nn][grad]") {
  auto be = backend::make_backend("cpu", 1);
  // loss = sum_i c_i x_i^3, gradient 3 c_i x_i^2
  const int n = 20;
  tensor::Tensor x = test::random_tensor(*be, tensor::Shape{n}, 1);
  const auto c = test::random_values(n, 2);
  auto loss = [&] {
    auto v = x.to_host_f32();
    double s = 0;
    for (int i = 0; i < n; ++i) s += c[i] * double(v[i]) * v[i] * v[i];
    return s;
  };
  auto xv = x.to_host_f32();
  std::vector<float> grad(n);
  for (int i = 0; i < n; ++i) grad[i] = 3 * c[i] * xv[i] * xv[i];
  auto coords = test::sample_coords(n, n, 3);

  auto exact = test::check_gradient("x", x, grad, coords, loss);
  INFO(exact.report);
  CHECK(exact.ok());

  auto scaled = grad;
  for (auto& g : scaled) g *= 1.05f;  // 5 % too large everywhere
  CHECK_FALSE(test::check_gradient("x", x, scaled, coords, loss).ok());

  auto one_wrong = grad;
  int largest = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(grad[i]) > std::fabs(grad[largest])) largest = i;
  one_wrong[largest] = -one_wrong[largest];  // a sign error in one coordinate
  auto r = test::check_gradient("x", x, one_wrong, coords, loss);
  CHECK(r.failed == 1);
  // The values were restored.
  CHECK(x.to_host_f32() == xv);
}

TEST_CASE("grad check: a ReLU kink inside the step is excused only when allowed", "[nn][grad]") {
  auto be = backend::make_backend("cpu", 1);
  // loss = sum_i c_i relu(x_i) + x_i^2 with x_0 = 0 exactly: relu'(0) is taken as 0 (the kernels' rule).
  const int n = 10;
  auto xv = test::random_values(n, 4);
  xv[0] = 0.0f;
  tensor::Tensor x = tensor::Tensor::from_host(*be, tensor::Shape{n}, xv);
  const auto c = test::random_values(n, 5, 0.5f, 1.0f);
  auto loss = [&] {
    auto v = x.to_host_f32();
    double s = 0;
    for (int i = 0; i < n; ++i) s += c[i] * std::max(0.0f, v[i]) + double(v[i]) * v[i];
    return s;
  };
  std::vector<float> grad(n);
  for (int i = 0; i < n; ++i) grad[i] = (xv[i] > 0 ? c[i] : 0.0f) + 2 * xv[i];
  auto coords = test::sample_coords(n, n, 6);
  CHECK_FALSE(test::check_gradient("x", x, grad, coords, loss, 1e-3).ok());
  auto r = test::check_gradient("x", x, grad, coords, loss, 1e-3, 2e-2, 2e-3, true);
  INFO(r.report);
  CHECK(r.ok());
  // Excusing kinks does not excuse wrong values.
  auto wrong = grad;
  wrong[3] *= 1.1f;
  CHECK_FALSE(test::check_gradient("x", x, wrong, coords, loss, 1e-3, 2e-2, 2e-3, true).ok());
  wrong = grad;
  wrong[0] = 0.25f * c[0];  // neither side's slope nor their average
  CHECK_FALSE(test::check_gradient("x", x, wrong, coords, loss, 1e-3, 2e-2, 2e-3, true).ok());
}
