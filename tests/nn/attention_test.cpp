// Multi-head attention: the worked numbers, masking, and finite-difference gradients (self, causal, cross,
// with attention dropout).
#include <catch2/catch.hpp>

#include "backend/backend.h"
#include "nn/attention.h"
#include "support/grad_check.h"

using namespace tt;
using nn::MultiHeadAttention;
using tensor::Shape;
using tensor::Tensor;

namespace {

void set_param(const nn::ParameterSet& params, const std::string& name, const std::vector<float>& v) {
  const auto& p = params.get(name);
  REQUIRE(static_cast<int64_t>(v.size()) == p.shape.numel());
  p.value.backend().copy_from_host(p.value.f32(), v.data(), v.size() * 4);
}

struct Worked {
  std::unique_ptr<backend::Backend> be = backend::make_backend("cpu", 1);
  nn::ParameterSet params;
  MultiHeadAttention attn;
  std::vector<float> probs, out;

  explicit Worked(bool causal) {
    attn.declare(params, "attn", 2, 1, MultiHeadAttention::Kind::cross, 0.0f, 0);
    params.allocate(*be);
    attn.bind(params);
    // Identity projections for Q and K, 10 x identity for V, identity output: the layer computes exactly
    // softmax(Q K^T / sqrt(2)) V on Q = K = rows of `x`, V = 10 x.
    set_param(params, "attn.q_proj.weight", {1, 0, 0, 1});
    set_param(params, "attn.k_proj.weight", {1, 0, 0, 1});
    set_param(params, "attn.v_proj.weight", {10, 0, 0, 10});
    set_param(params, "attn.out_proj.weight", {1, 0, 0, 1});
    Tensor x = Tensor::from_host(*be, Shape{1, 3, 2}, std::vector<float>{1, 0, 0, 1, 1, 1});
    Tensor y = Tensor::empty(*be, Shape{1, 3, 2});
    Tensor capture = Tensor::empty(*be, Shape{1, 1, 3, 3});
    tensor::Arena arena(*be);
    nn::StepContext ctx{arena, false, 0, 0};
    attn.forward(y, x, x, Tensor{}, causal, ctx, nullptr, capture);
    probs = capture.to_host_f32();
    out = y.to_host_f32();
  }
};

}  // namespace

TEST_CASE("attention: the paper review's worked numbers", "[nn][attention]") {
  SECTION("unmasked") {
    Worked w(false);
    CHECK(w.probs[0] == Approx(0.401112).margin(1e-6));
    CHECK(w.probs[1] == Approx(0.197776).margin(1e-6));
    CHECK(w.probs[2] == Approx(0.401112).margin(1e-6));
    CHECK(w.out[0] == Approx(8.022242).margin(1e-5));
    CHECK(w.out[1] == Approx(5.988879).margin(1e-5));
  }
  SECTION("causal") {
    Worked w(true);
    // row 0 sees only key 0
    CHECK(w.probs[0] == 1.0f);
    CHECK(w.probs[1] == 0.0f);
    CHECK(w.probs[2] == 0.0f);
    CHECK(w.probs[3] == Approx(0.330238).margin(1e-6));
    CHECK(w.probs[4] == Approx(0.669762).margin(1e-6));
    CHECK(w.probs[5] == 0.0f);
    CHECK(w.out[2] == Approx(3.302385).margin(1e-5));
    CHECK(w.out[3] == Approx(6.697615).margin(1e-5));
    CHECK(w.probs[6] == Approx(0.248255).margin(1e-6));
    CHECK(w.probs[7] == Approx(0.248255).margin(1e-6));
    CHECK(w.probs[8] == Approx(0.50349).margin(1e-5));
  }
}

TEST_CASE("attention: masked weights are exactly zero and rows sum to one", "[nn][attention]") {
  auto be = backend::make_backend("cpu", 1);
  const int B = 2, T = 5, D = 8, H = 2;
  nn::ParameterSet params;
  MultiHeadAttention attn;
  attn.declare(params, "attn", D, H, MultiHeadAttention::Kind::self, 0.0f, 0);
  params.allocate(*be);
  attn.bind(params);
  test::randomize(params, 7);
  Tensor x = test::random_tensor(*be, Shape{B, T, D}, 8);
  Tensor lengths = Tensor::from_host(*be, Shape{B}, std::vector<int32_t>{5, 3});
  const std::vector<int> len{5, 3};
  for (bool causal : {false, true}) {
    Tensor y = Tensor::empty(*be, Shape{B, T, D});
    Tensor capture = Tensor::empty(*be, Shape{B, H, T, T});
    tensor::Arena arena(*be);
    nn::StepContext ctx{arena, false, 0, 0};
    attn.forward(y, x, Tensor{}, lengths, causal, ctx, nullptr, capture);
    auto p = capture.to_host_f32();
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h)
        for (int q = 0; q < T; ++q) {
          double sum = 0;
          for (int k = 0; k < T; ++k) {
            float w = p[((size_t(b) * H + h) * T + q) * T + k];
            sum += w;
            if (k >= len[b] || (causal && k > q)) CHECK(w == 0.0f);
            else CHECK(w > 0.0f);
          }
          CHECK(sum == Approx(1.0).margin(1e-6));
        }
  }
}

namespace {

// Checks d out/d {x, memory, parameters} of one attention configuration against finite differences.
void check_attention_gradients(MultiHeadAttention::Kind kind, bool causal, float attention_dropout, int D, int H) {
  auto be = backend::make_backend("cpu", 1);
  const int B = 2, Tq = 4, Tk = kind == MultiHeadAttention::Kind::self ? 4 : 5;
  nn::ParameterSet params;
  MultiHeadAttention attn;
  attn.declare(params, "attn", D, H, kind, attention_dropout, 3);
  params.allocate(*be);
  attn.bind(params);
  test::randomize(params, 11);
  const bool cross = kind == MultiHeadAttention::Kind::cross;
  Tensor x = test::random_tensor(*be, Shape{B, Tq, D}, 12);
  Tensor memory = cross ? test::random_tensor(*be, Shape{B, Tk, D}, 13) : Tensor{};
  Tensor lengths = Tensor::from_host(*be, Shape{B}, std::vector<int32_t>{Tk, Tk - 2});
  const auto r = test::random_values(size_t(B) * Tq * D, 14);
  tensor::Arena arena(*be);
  // Training mode with a fixed key: the dropout mask is a pure function of the key, so the loss is a
  // deterministic, differentiable function of the inputs.
  auto forward = [&](MultiHeadAttention::Saved* saved) {
    nn::StepContext ctx{arena, attention_dropout > 0, 42, 7};
    Tensor y = arena.allocate(Shape{B, Tq, D});
    attn.forward(y, x, memory, lengths, causal, ctx, saved);
    return y;
  };
  auto loss = [&] {
    tensor::ArenaScope scope(arena);
    return test::dot(forward(nullptr).to_host_f32(), r);
  };
  params.zero_grad();
  std::vector<float> dx_host, dmemory_host;
  {
    tensor::ArenaScope scope(arena);
    MultiHeadAttention::Saved saved;
    forward(&saved);
    tensor::Arena scratch(*be);
    Tensor dy = Tensor::from_host(*be, Shape{B, Tq, D}, r);
    Tensor dx = Tensor::empty(*be, x.shape());
    Tensor dmemory = cross ? Tensor::zeros(*be, memory.shape()) : Tensor{};
    attn.backward(dx, dmemory, dy, saved, scratch);
    dx_host = dx.to_host_f32();
    if (cross) dmemory_host = dmemory.to_host_f32();
  }
  auto rx = test::check_gradient("dx", x, dx_host, test::sample_coords(x.numel(), 40, 1), loss);
  INFO(rx.report);
  CHECK(rx.ok());
  if (cross) {
    auto rm = test::check_gradient("dmemory", memory, dmemory_host, test::sample_coords(memory.numel(), 40, 2), loss);
    INFO(rm.report);
    CHECK(rm.ok());
  }
  auto rp = test::check_gradient("params", params.values(), params.grads().to_host_f32(),
                                 test::param_coords(params, 6, 3), loss);
  INFO(rp.report);
  CHECK(rp.ok());
}

}  // namespace

TEST_CASE("attention gradients: self-attention with key padding", "[nn][attention][grad]") {
  check_attention_gradients(MultiHeadAttention::Kind::self, false, 0.0f, 8, 2);
}

TEST_CASE("attention gradients: causal self-attention", "[nn][attention][grad]") {
  check_attention_gradients(MultiHeadAttention::Kind::self, true, 0.0f, 8, 2);
}

TEST_CASE("attention gradients: cross-attention", "[nn][attention][grad]") {
  check_attention_gradients(MultiHeadAttention::Kind::cross, false, 0.0f, 8, 2);
}

TEST_CASE("attention gradients: attention dropout", "[nn][attention][grad]") {
  check_attention_gradients(MultiHeadAttention::Kind::self, true, 0.2f, 8, 2);
  check_attention_gradients(MultiHeadAttention::Kind::cross, false, 0.2f, 8, 2);
}

TEST_CASE("attention gradients: unfused projections (d_model not a multiple of 16)", "[nn][attention][grad]") {
  // D = 6: the biases are not adjacent in the flat buffer, so Q/K/V run as separate GEMMs into blocks.
  check_attention_gradients(MultiHeadAttention::Kind::self, true, 0.0f, 6, 2);
  check_attention_gradients(MultiHeadAttention::Kind::cross, false, 0.0f, 6, 3);
}
