// --ema-decay: the moving average of the weights on worked numbers, and swapping it in and out.
#include "train/weight_average.h"

#include <catch2/catch.hpp>

#include "backend/backend.h"
#include "ops/copy.h"

using tt::nn::ParameterSet;

TEST_CASE("the weights' moving average follows D * average + (1 - D) * weights, step by step",
          "[train][ema]") {
  auto be = tt::backend::make_backend("cpu", 1);
  ParameterSet weights;
  weights.declare("a", tt::tensor::Shape{2});
  weights.declare("b", tt::tensor::Shape{1});
  weights.allocate(*be);
  auto set = [&](std::vector<float> a, float b) {
    tt::ops::upload(weights.get("a").value, a);
    tt::ops::upload(weights.get("b").value, std::vector<float>{b});
  };
  set({1, -2}, 4);
  tt::train::WeightAverage average(weights, 0.5);
  CHECK(average.params().get("a").shape == weights.get("a").shape);
  average.start(weights);
  // Steps move the weights to (3, 0, 8), then (5, 2, 0): 0.5 * (1, -2, 4) + 0.5 * (3, 0, 8) = (2, -1, 6),
  // then 0.5 * (2, -1, 6) + 0.5 * (5, 2, 0) = (3.5, 0.5, 3).
  set({3, 0}, 8);
  average.update(weights);
  CHECK(average.params().get("a").value.to_host_f32() == std::vector<float>{2, -1});
  CHECK(average.params().get("b").value.to_host_f32() == std::vector<float>{6});
  set({5, 2}, 0);
  average.update(weights);
  CHECK(average.params().get("a").value.to_host_f32() == std::vector<float>{3.5f, 0.5f});
  CHECK(average.params().get("b").value.to_host_f32() == std::vector<float>{3});
  {  // In scope the model's weights are the average; out of it, its own again.
    const tt::train::AverageInScope in(&average, weights);
    CHECK(weights.get("a").value.to_host_f32() == std::vector<float>{3.5f, 0.5f});
    CHECK(average.params().get("a").value.to_host_f32() == std::vector<float>{5, 2});
  }
  CHECK(weights.get("a").value.to_host_f32() == std::vector<float>{5, 2});
  CHECK(average.params().get("b").value.to_host_f32() == std::vector<float>{3});
  const tt::train::AverageInScope none(nullptr, weights);  // no average: nothing happens
  CHECK(weights.get("b").value.to_host_f32() == std::vector<float>{0});
}
