// Linear and LinearGroup: values against a host reference, fused == unfused, finite-difference gradients.
#include <catch2/catch.hpp>

#include "backend/backend.h"
#include "nn/linear.h"
#include "ops/matmul.h"
#include "support/grad_check.h"

using namespace tt;
using tensor::Shape;
using tensor::Tensor;

TEST_CASE("linear: y = x W^T + b against a host reference", "[nn][linear]") {
  auto be = backend::make_backend("cpu", 1);
  nn::ParameterSet params;
  nn::Linear lin;
  lin.declare(params, "fc", 3, 2);
  params.allocate(*be);
  lin.bind(params);
  test::randomize(params, 1);
  Tensor x = test::random_tensor(*be, Shape{4, 3}, 2);
  Tensor y = Tensor::empty(*be, Shape{4, 2});
  lin.forward(y, x);
  auto w = params.get("fc.weight").value.to_host_f32(), b = params.get("fc.bias").value.to_host_f32();
  auto xv = x.to_host_f32(), yv = y.to_host_f32();
  for (int n = 0; n < 4; ++n)
    for (int o = 0; o < 2; ++o) {
      double ref = b[o];
      for (int i = 0; i < 3; ++i) ref += double(xv[n * 3 + i]) * w[o * 3 + i];
      CHECK(yv[n * 2 + o] == Approx(ref).margin(1e-5));
    }
}

namespace {

void check_group(int D, bool expect_fused) {
  auto be = backend::make_backend("cpu", 1);
  nn::ParameterSet params;
  nn::Linear q, k, v;
  q.declare_weight(params, "q", D, D);
  k.declare_weight(params, "k", D, D);
  v.declare_weight(params, "v", D, D);
  q.declare_bias(params, "q");
  k.declare_bias(params, "k");
  v.declare_bias(params, "v");
  params.allocate(*be);
  for (auto* l : {&q, &k, &v}) l->bind(params);
  nn::LinearGroup group;
  group.bind(params, {&q, &k, &v});
  CHECK(group.fused() == expect_fused);
  test::randomize(params, 5);
  const int N = 5;
  Tensor x = test::random_tensor(*be, Shape{N, D}, 6);
  Tensor y = Tensor::empty(*be, Shape{N, 3 * D});
  group.forward(y, x);
  // Member i of the group equals the member run alone.
  auto yv = y.to_host_f32();
  const nn::Linear* members[] = {&q, &k, &v};
  for (int i = 0; i < 3; ++i) {
    Tensor alone = Tensor::empty(*be, Shape{N, D});
    members[i]->forward(alone, x);
    auto av = alone.to_host_f32();
    const int64_t off = group.member_offset(i, N), ld = group.member_ld(i);
    for (int n = 0; n < N; ++n)
      for (int d = 0; d < D; ++d) CHECK(yv[off + n * ld + d] == Approx(av[n * D + d]).margin(1e-6));
  }
  // Gradients of loss = <y, r>.
  const auto r = test::random_values(size_t(N) * 3 * D, 7);
  auto loss = [&] {
    Tensor out = Tensor::empty(*be, Shape{N, 3 * D});
    group.forward(out, x);
    return test::dot(out.to_host_f32(), r);
  };
  params.zero_grad();
  Tensor dx = Tensor::empty(*be, x.shape());
  group.backward(dx, Tensor::from_host(*be, Shape{N, 3 * D}, r), x);
  auto rx = test::check_gradient("dx", x, dx.to_host_f32(), test::sample_coords(x.numel(), 30, 1), loss);
  INFO(rx.report);
  CHECK(rx.ok());
  auto rp = test::check_gradient("params", params.values(), params.grads().to_host_f32(),
                                 test::param_coords(params, 8, 2), loss);
  INFO(rp.report);
  CHECK(rp.ok());
}

}  // namespace

TEST_CASE("linear group: one GEMM over adjacent q/k/v, same results and gradients", "[nn][linear][grad]") {
  check_group(16, true);
}

TEST_CASE("linear group: falls back to one GEMM per member when not adjacent", "[nn][linear][grad]") {
  check_group(6, false);  // 6 floats of bias: alignment padding separates the biases
}

TEST_CASE("linear backward of no rows: dW assigned the empty sum (zeros) or left as accumulated", "[nn][linear]") {
  auto be = backend::make_backend("cpu", 1);
  Tensor w = test::random_tensor(*be, Shape{2, 3}, 1);
  Tensor x = Tensor::empty(*be, Shape{0, 3}), dy = Tensor::empty(*be, Shape{0, 2});
  for (bool accumulate : {true, false}) {
    Tensor dw = Tensor::from_host(*be, Shape{2, 3}, std::vector<float>(6, 1.5f));
    ops::linear_backward(Tensor{}, dw, Tensor{}, dy, x, w, /*accumulate_dx=*/false, accumulate);
    CHECK(dw.to_host_f32() == std::vector<float>(6, accumulate ? 1.5f : 0.0f));
  }
}
