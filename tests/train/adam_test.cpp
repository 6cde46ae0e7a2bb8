// Adam over the flat parameter buffer, through the backend, on worked numbers (computed in double by hand
// from Kingma & Ba with the paper's betas 0.9 / 0.98 and eps 1e-9).
#include <catch2/catch.hpp>

#include "backend/backend.h"
#include "nn/params.h"
#include "train/adam.h"
#include "util/error.h"

namespace {

void set_host(const tt::tensor::Tensor& t, const std::vector<float>& v) {
  t.backend().copy_from_host(t.f32(), v.data(), v.size() * sizeof(float));
}

}  // namespace

TEST_CASE("Adam: two steps on worked numbers, one call over every parameter", "[adam]") {
  auto backend = tt::backend::make_backend("cpu", 1);
  tt::nn::ParameterSet params;
  params.declare("a", tt::tensor::Shape{3});  // padded to 16 floats in the flat buffer
  params.declare("b", tt::tensor::Shape{1});
  params.allocate(*backend);
  set_host(params.get("a").value, {1.0f, -2.0f, 0.5f});
  set_host(params.get("b").value, {3.0f});

  tt::train::Adam adam(params);
  CHECK(adam.options().beta1 == 0.9f);
  CHECK(adam.options().beta2 == 0.98f);
  CHECK(adam.options().eps == 1e-9f);
  CHECK(adam.m().numel() == params.flat_size());

  set_host(params.get("a").grad, {0.1f, -0.2f, 0.0f});
  set_host(params.get("b").grad, {1e-3f});
  adam.step(params, 0.01f);
  CHECK(adam.steps() == 1);
  // Step 1: bias correction makes the update lr * g / (|g| + eps): lr * sign(g); a zero gradient moves nothing.
  auto a = params.get("a").value.to_host_f32();
  CHECK(a[0] == Approx(0.99f).epsilon(1e-6));
  CHECK(a[1] == Approx(-1.99f).epsilon(1e-6));
  CHECK(a[2] == 0.5f);
  CHECK(params.get("b").value.to_host_f32()[0] == Approx(2.99000001f).epsilon(1e-6));
  auto m = adam.m().to_host_f32();
  auto v = adam.v().to_host_f32();
  CHECK(m[0] == Approx(0.01f).epsilon(1e-5));
  CHECK(v[1] == Approx(0.0008f).epsilon(1e-5));
  // Adam reads the gradients, it does not clear them.
  CHECK(params.get("a").grad.to_host_f32()[0] == 0.1f);

  set_host(params.get("a").grad, {0.3f, 0.1f, 0.0f});
  set_host(params.get("b").grad, {-2.0f});
  adam.step(params, 0.01f);
  CHECK(adam.steps() == 2);
  a = params.get("a").value.to_host_f32();
  CHECK(a[0] == Approx(0.980857219).epsilon(1e-5));
  CHECK(a[1] == Approx(-1.987328923).epsilon(1e-5));
  CHECK(a[2] == 0.5f);
  CHECK(params.get("b").value.to_host_f32()[0] == Approx(2.997402596).epsilon(1e-5));
  m = adam.m().to_host_f32();
  CHECK(m[0] == Approx(0.039f).epsilon(1e-5));
  // The alignment padding between tensors stays exactly zero.
  const auto flat = params.values().to_host_f32();
  for (int64_t i = 3; i < params.get("b").offset; ++i) CHECK(flat[static_cast<size_t>(i)] == 0.0f);
}

TEST_CASE("Adam rejects impossible hyper-parameters", "[adam]") {
  auto backend = tt::backend::make_backend("cpu", 1);
  tt::nn::ParameterSet params;
  params.declare("a", tt::tensor::Shape{2});
  params.allocate(*backend);
  CHECK_THROWS_AS(tt::train::Adam(params, tt::train::AdamOptions{1.0f, 0.98f, 1e-9f, 0.0f}), tt::ConfigError);
  CHECK_THROWS_AS(tt::train::Adam(params, tt::train::AdamOptions{0.9f, 0.98f, 0.0f, 0.0f}), tt::ConfigError);
}
