// Encoder layer, post-LN and pre-LN: finite-difference gradients of inputs (and memory) and of
// every parameter, with dropout off and with dropout on under a fixed key.
#include <catch2/catch.hpp>

#include "backend/backend.h"
#include "nn/encoder_layer.h"
#include "layer_fixture.h"
#include "support/grad_check.h"

using namespace tt;
using tensor::Shape;
using tensor::Tensor;

namespace {

using test::layer_config;
using test::report;

void check_encoder_layer(nn::NormPlacement norm, bool dropout) {
  auto be = backend::make_backend("cpu", 1);
  const auto c = layer_config(norm, dropout);
  const int B = 2, S = 5, D = c.d_model;
  nn::ParameterSet params;
  nn::EncoderLayer layer;
  layer.declare(params, "encoder.layers.0", c, 0);
  params.allocate(*be);
  layer.bind(params);
  test::randomize(params, 21);
  Tensor x = test::random_tensor(*be, Shape{B, S, D}, 22);
  Tensor lengths = Tensor::from_host(*be, Shape{B}, std::vector<int32_t>{5, 3});
  const auto r = test::random_values(size_t(B) * S * D, 23);
  tensor::Arena arena(*be);
  auto forward = [&](nn::EncoderLayer::Saved* saved) {
    nn::StepContext ctx{arena, dropout, 99, 4};
    Tensor y = arena.allocate(x.shape());
    layer.forward(y, x, lengths, ctx, saved);
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
    nn::EncoderLayer::Saved saved;
    forward(&saved);
    tensor::Arena scratch(*be);
    Tensor dx = Tensor::empty(*be, x.shape());
    layer.backward(dx, Tensor::from_host(*be, x.shape(), r), saved, scratch);
    dxv = dx.to_host_f32();
  }
  report(test::check_gradient("dx", x, dxv, test::sample_coords(x.numel(), 40, 1), loss, 1e-3));
  report(test::check_gradient("params", params.values(), params.grads().to_host_f32(),
                              test::param_coords(params, 4, 2), loss, 1e-3));
}

}  // namespace

TEST_CASE("encoder layer gradients: post-LN", "[nn][encoder_layer][grad]") {
  check_encoder_layer(nn::NormPlacement::post, false);
  check_encoder_layer(nn::NormPlacement::post, true);
}

TEST_CASE("encoder layer gradients: pre-LN", "[nn][encoder_layer][grad]") {
  check_encoder_layer(nn::NormPlacement::pre, false);
  check_encoder_layer(nn::NormPlacement::pre, true);
}
