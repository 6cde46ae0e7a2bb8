// Tensor: host round trips, views sharing storage (reshape, slice_rows), copy_from, zero.
#include <catch2/catch.hpp>

#include "backend/backend.h"
#include "tensor/tensor.h"
#include "util/error.h"

using namespace tt;
using tensor::DType;
using tensor::Shape;
using tensor::Tensor;

TEST_CASE("shape basics", "[tensor]") {
  Shape s{2, 3, 4};
  CHECK(s.rank() == 3);
  CHECK(s.numel() == 24);
  CHECK(s.str() == "[2, 3, 4]");
  CHECK(s == Shape{2, 3, 4});
  CHECK(s != Shape{2, 12});
}

TEST_CASE("tensor round trip and views share storage", "[tensor]") {
  auto be = backend::make_backend("cpu", 1);
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[i] = float(i);
  Tensor t = Tensor::from_host(*be, Shape{2, 3, 4}, v);
  CHECK(t.to_host_f32() == v);
  CHECK(t.bytes() == 96);

  Tensor r = t.reshape(Shape{6, 4});
  CHECK(r.shape() == Shape{6, 4});
  CHECK(r.f32() == t.f32());
  CHECK_THROWS_AS(t.reshape(Shape{5, 5}), InternalError);

  Tensor s = r.slice_rows(2, 3);  // rows 2..4 of [6, 4]
  CHECK(s.shape() == Shape{3, 4});
  CHECK(s.to_host_f32() == std::vector<float>(v.begin() + 8, v.begin() + 20));
  s.zero();  // writes through to the parent
  auto after = t.to_host_f32();
  for (int i = 0; i < 24; ++i) CHECK(after[i] == ((i >= 8 && i < 20) ? 0.0f : float(i)));
  CHECK_THROWS_AS(r.slice_rows(5, 2), InternalError);

  Tensor c = Tensor::zeros(*be, Shape{3, 4});
  c.copy_from(t.slice_rows(0, 1).reshape(Shape{3, 4}));
  CHECK(c.to_host_f32() == std::vector<float>(after.begin(), after.begin() + 12));
  CHECK_THROWS_AS(c.i32(), InternalError);
}

TEST_CASE("i32 tensors", "[tensor]") {
  auto be = backend::make_backend("cpu", 1);
  Tensor t = Tensor::from_host(*be, Shape{3}, std::vector<int32_t>{7, -1, 2});
  CHECK(t.dtype() == DType::i32);
  CHECK(t.to_host_i32() == std::vector<int32_t>{7, -1, 2});
  t.zero();
  CHECK(t.to_host_i32() == std::vector<int32_t>{0, 0, 0});
}
