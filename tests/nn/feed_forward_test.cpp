#include <catch2/catch.hpp>

#include "backend/backend.h"
#include "nn/feed_forward.h"
#include "support/grad_check.h"

using namespace tt;
using tensor::Shape;
using tensor::Tensor;

namespace {

void check_ffn(float relu_dropout) {
  auto be = backend::make_backend("cpu", 1);
  const int N = 6, D = 8, F = 20;
  nn::ParameterSet params;
  nn::FeedForward ffn;
  ffn.declare(params, "ffn", D, F, relu_dropout, backend::Activation::relu, 9);
  params.allocate(*be);
  ffn.bind(params);
  test::randomize(params, 1);
  Tensor x = test::random_tensor(*be, Shape{N, D}, 2);
  const auto r = test::random_values(size_t(N) * D, 3);
  tensor::Arena arena(*be);
  // Training mode, fixed key: the relu dropout mask is fixed, so the loss is a function of x and the weights.
  auto forward = [&](nn::FeedForward::Saved* saved) {
    nn::StepContext ctx{arena, relu_dropout > 0, 5, 3};
    Tensor y = arena.allocate(Shape{N, D});
    ffn.forward(y, x, ctx, saved);
    return y;
  };
  auto loss = [&] {
    tensor::ArenaScope scope(arena);
    return test::dot(forward(nullptr).to_host_f32(), r);
  };
  params.zero_grad();
  std::vector<float> dxv;
  {
    tensor::ArenaScope scope(arena);
    nn::FeedForward::Saved saved;
    forward(&saved);
    tensor::Arena scratch(*be);
    Tensor dx = Tensor::empty(*be, x.shape());
    ffn.backward(dx, Tensor::from_host(*be, Shape{N, D}, r), saved, scratch);
    dxv = dx.to_host_f32();
  }
  // A small step keeps the perturbation from crossing ReLU kinks (pre-activations are O(0.1..1)).
  auto rx = test::check_gradient("dx", x, dxv, test::sample_coords(x.numel(), 40, 1), loss, 1e-3);
  INFO(rx.report);
  CHECK(rx.ok());
  auto rp = test::check_gradient("params", params.values(), params.grads().to_host_f32(),
                                 test::param_coords(params, 12, 2), loss, 1e-3);
  INFO(rp.report);
  CHECK(rp.ok());
}

}  // namespace

TEST_CASE("feed-forward gradients", "[nn][feed_forward][grad]") { check_ffn(0.0f); }

TEST_CASE("feed-forward gradients with relu dropout", "[nn][feed_forward][grad]") { check_ffn(0.3f); }
