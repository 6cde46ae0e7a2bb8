// Decoder layer, post-LN and pre-LN: finite-difference gradients of inputs (and memory) and of
// every parameter, with dropout off and with dropout on under a fixed key.
#include <catch2/catch.hpp>

#include "backend/backend.h"
#include "nn/decoder_layer.h"
#include "layer_fixture.h"
#include "support/grad_check.h"

using namespace tt;
using tensor::Shape;
using tensor::Tensor;

namespace {

using test::layer_config;
using test::report;

void check_decoder_layer(nn::NormPlacement norm, bool dropout) {
  auto be = backend::make_backend("cpu", 1);
  const auto c = layer_config(norm, dropout);
  const int B = 2, S = 5, T = 4, D = c.d_model;
  nn::ParameterSet params;
  nn::DecoderLayer layer;
  layer.declare(params, "decoder.layers.0", c, 0);
  params.allocate(*be);
  layer.bind(params);
  test::randomize(params, 31);
  Tensor x = test::random_tensor(*be, Shape{B, T, D}, 32);
  Tensor memory = test::random_tensor(*be, Shape{B, S, D}, 33);
  Tensor src_lengths = Tensor::from_host(*be, Shape{B}, std::vector<int32_t>{4, 5});
  Tensor tgt_lengths = Tensor::from_host(*be, Shape{B}, std::vector<int32_t>{4, 2});
  const auto r = test::random_values(size_t(B) * T * D, 34);
  tensor::Arena arena(*be);
  auto forward = [&](nn::DecoderLayer::Saved* saved) {
    nn::StepContext ctx{arena, dropout, 98, 5};
    Tensor y = arena.allocate(x.shape());
    layer.forward(y, x, tgt_lengths, memory, src_lengths, ctx, saved);
    return y;
  };
  auto loss = [&] {
    tensor::ArenaScope scope(arena);
    return test::dot(forward(nullptr).to_host_f32(), r);
  };
  params.zero_grad();
  std::vector<float> dxv, dmv;
  {
    tensor::ArenaScope scope(arena);
    nn::DecoderLayer::Saved saved;
    forward(&saved);
    tensor::Arena scratch(*be);
    Tensor dx = Tensor::empty(*be, x.shape());
    Tensor dmemory = Tensor::zeros(*be, memory.shape());
    layer.backward(dx, dmemory, Tensor::from_host(*be, x.shape(), r), saved, scratch);
    dxv = dx.to_host_f32();
    dmv = dmemory.to_host_f32();
  }
  report(test::check_gradient("dx", x, dxv, test::sample_coords(x.numel(), 40, 1), loss, 1e-3));
  report(test::check_gradient("dmemory", memory, dmv, test::sample_coords(memory.numel(), 40, 3), loss, 1e-3));
  report(test::check_gradient("params", params.values(), params.grads().to_host_f32(),
                              test::param_coords(params, 4, 2), loss, 1e-3));
}

}  // namespace

TEST_CASE("decoder layer gradients: post-LN", "[nn][decoder_layer][grad]") {
  check_decoder_layer(nn::NormPlacement::post, false);
  check_decoder_layer(nn::NormPlacement::post, true);
}

TEST_CASE("decoder layer gradients: pre-LN", "[nn][decoder_layer][grad]") {
  check_decoder_layer(nn::NormPlacement::pre, false);
  check_decoder_layer(nn::NormPlacement::pre, true);
}
