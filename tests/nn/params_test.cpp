// ParameterSet's lazily zeroed gradients: which ranges a step's start zeroes, which it leaves for their first
// product, and the first-write bookkeeping (the model-level equality is in transformer_test).
#include <catch2/catch.hpp>

#include <cmath>

#include "backend/backend.h"
#include "nn/params.h"
#include "support/grad_check.h"

using namespace tt;

namespace {

int count_nan(const std::vector<float>& v) {
  int n = 0;
  for (float x : v) n += std::isnan(x);
  return n;
}

}  // namespace

TEST_CASE("zero_grad_lazily zeroes all but the overwritten gradients, finish_gradients the unwritten rest",
          "[nn][params]") {
  auto be = backend::make_backend("cpu", 1);
  nn::ParameterSet params;
  // Odd sizes, so alignment padding sits between the parameters.
  const size_t bias = params.declare("a.bias", tensor::Shape{5});
  const size_t w1 = params.declare("a.weight", tensor::Shape{3, 7}, nn::GradientStart::overwritten);
  const size_t w2 = params.declare("b.weight", tensor::Shape{2, 3}, nn::GradientStart::overwritten);
  const size_t norm = params.declare("b.norm", tensor::Shape{9});
  params.allocate(*be);
  test::poison_gradients(params);
  params.zero_grad_lazily();
  const std::vector<float> flat = params.grads().to_host_f32();
  // Exactly the two overwritten parameters' elements are left as they were.
  CHECK(count_nan(flat) == 21 + 6);
  CHECK(count_nan(params[w1].grad.to_host_f32()) == 21);
  CHECK(count_nan(params[w2].grad.to_host_f32()) == 6);
  CHECK(params[bias].grad.to_host_f32() == std::vector<float>(5, 0.0f));
  CHECK(params[norm].grad.to_host_f32() == std::vector<float>(9, 0.0f));

  const nn::FirstWrite first = params.first_write({w1});
  CHECK(first.take());   // the step's first product overwrites
  CHECK(!first.take());  // later ones (gradient accumulation) add
  params[w1].grad.zero();  // stands for that product's write
  params.finish_gradients();  // w2 was never written: zeroed now
  CHECK(count_nan(params.grads().to_host_f32()) == 0);
  CHECK(!params.first_write({w2}).take());

  // zero_grad() zeroes everything and leaves nothing pending.
  test::poison_gradients(params);
  params.zero_grad();
  CHECK(count_nan(params.grads().to_host_f32()) == 0);
  CHECK(!params.first_write({w1, w2}).take());
}

TEST_CASE("gradients written together must be pending together", "[nn][params]") {
  auto be = backend::make_backend("cpu", 1);
  nn::ParameterSet params;
  const size_t w1 = params.declare("q.weight", tensor::Shape{2, 2}, nn::GradientStart::overwritten);
  const size_t w2 = params.declare("k.weight", tensor::Shape{2, 2}, nn::GradientStart::overwritten);
  params.allocate(*be);
  params.zero_grad_lazily();
  CHECK(params.first_write({w1}).take());
  // A merged product over both would overwrite w1's accumulated gradient: refused.
  CHECK_THROWS_WITH(params.first_write({w1, w2}).take(), Catch::Contains("written apart"));
}

TEST_CASE("without gradients, a first write is never pending", "[nn][params]") {
  auto be = backend::make_backend("cpu", 1);
  nn::ParameterSet params;
  const size_t w = params.declare("w", tensor::Shape{4}, nn::GradientStart::overwritten);
  params.allocate(*be, /*with_gradients=*/false);
  params.zero_grad_lazily();
  CHECK(!params.first_write({w}).take());
}
