// Arena: bump allocation with 64-byte alignment, spill into new chunks, consolidation to the high-water
// size on reset, and reuse of the same memory on the following steps.
#include <catch2/catch.hpp>

#include "backend/backend.h"
#include "tensor/arena.h"

using namespace tt;
using tensor::Arena;
using tensor::ArenaScope;
using tensor::Shape;

TEST_CASE("arena spills, consolidates on reset, then reuses", "[tensor][arena]") {
  auto be = backend::make_backend("cpu", 1);
  Arena arena(*be, 1024);
  CHECK(arena.capacity_bytes() == 1024);
  auto a = arena.allocate(Shape{10});  // 40 bytes -> 64
  auto b = arena.allocate(Shape{3, 5});
  CHECK(reinterpret_cast<uintptr_t>(a.f32()) % 64 == 0);
  CHECK(reinterpret_cast<uintptr_t>(b.f32()) % 64 == 0);
  CHECK(b.f32() - a.f32() == 16);  // packed right after a's 64 bytes
  auto big = arena.allocate(Shape{1000});  // does not fit: spills into a new chunk
  CHECK(arena.capacity_bytes() > 1024);
  big.zero();
  const size_t high = arena.high_water_bytes();
  CHECK(high >= 64 + 64 + 4000);
  arena.reset();
  CHECK(arena.capacity_bytes() == high);  // one chunk of the high-water size

  // The same sequence now fits in the one chunk: no spill, same addresses each step.
  float* first = nullptr;
  for (int step = 0; step < 3; ++step) {
    ArenaScope scope(arena);
    auto x = arena.allocate(Shape{10});
    arena.allocate(Shape{3, 5});
    arena.allocate(Shape{1000});
    if (step == 0) first = x.f32();
    CHECK(x.f32() == first);
    CHECK(arena.capacity_bytes() == high);
  }
}

TEST_CASE("tensors outliving a reset keep their memory", "[tensor][arena]") {
  auto be = backend::make_backend("cpu", 1);
  Arena arena(*be);
  auto kept = arena.allocate(Shape{4});
  kept.copy_from(tensor::Tensor::from_host(*be, Shape{4}, std::vector<float>{1, 2, 3, 4}));
  arena.allocate(Shape{1 << 20});  // spill
  arena.reset();
  auto fresh = arena.allocate(Shape{4});
  fresh.zero();
  CHECK(kept.to_host_f32() == std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("reserve: a known total in one chunk, without spills", "[tensor][arena]") {
  auto be = backend::make_backend("cpu", 1);
  Arena arena(*be, 1024);
  const Shape big{100000}, small{10};
  const size_t total = 3 * Arena::rounded_bytes(big) + Arena::rounded_bytes(small, tensor::DType::i32);
  CHECK(Arena::rounded_bytes(small, tensor::DType::i32) == 64);
  arena.reserve(total);  // nothing handed out yet: the 1024-byte chunk is replaced
  CHECK(arena.capacity_bytes() == total);
  auto a = arena.allocate(big);
  for (int i = 0; i < 2; ++i) arena.allocate(big);
  arena.allocate(small, tensor::DType::i32);
  CHECK(arena.capacity_bytes() == total);  // all in the one chunk
  arena.reserve(64);  // full: a new chunk of 64 bytes beside it, the first stays (a is still in use)
  CHECK(arena.capacity_bytes() == total + 64);
  a.zero();
  arena.reset();
  CHECK(arena.capacity_bytes() == arena.high_water_bytes());
  arena.reserve(total / 2);  // fits after the reset: nothing new
  CHECK(arena.capacity_bytes() == arena.high_water_bytes());
}
