// Bf16OperandCache (backend/cpu/bf16_operand_cache.h), the bookkeeping behind Backend::keep_bf16_operand:
// which operands it holds a copy for, when a copy is fresh (to be converted) or reused, reference-counted
// forgetting, and that copies come from one step buffer, freed from the top and grown to the busiest
// step. Runs on any processor.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "backend/cpu/bf16_operand_cache.h"

using tt::backend::MatrixStrides;
using tt::backend::cpu::Bf16OperandCache;

namespace {

// A dense [rows, cols] matrix at x.
Bf16OperandCache::Layout dense(const float* x, int64_t rows, int64_t cols) {
  return {x, 1, 1, rows, cols, MatrixStrides{0, 0, cols}};
}

}  // namespace

TEST_CASE("bf16 operand cache: a kept operand is converted once, then reused", "[backend][bf16]") {
  std::vector<float> x(64);
  Bf16OperandCache cache;
  bool fresh = true;
  CHECK(cache.find(dense(x.data(), 4, 16), fresh) == nullptr);  // nothing kept
  CHECK_FALSE(fresh);
  cache.keep(x.data(), 64);
  uint16_t* first = cache.find(dense(x.data(), 4, 16), fresh);
  REQUIRE(first != nullptr);
  CHECK(fresh);
  CHECK(cache.find(dense(x.data(), 4, 16), fresh) == first);
  CHECK_FALSE(fresh);
  // Another layout of the same range is another copy: rows 2..3 only, and a strided [B=2, H=2] head view.
  uint16_t* tail = cache.find(dense(x.data() + 32, 2, 16), fresh);
  CHECK(fresh);
  CHECK(tail != first);
  const Bf16OperandCache::Layout heads{x.data(), 2, 2, 2, 4, MatrixStrides{32, 4, 16}};
  uint16_t* h = cache.find(heads, fresh);
  CHECK(fresh);
  CHECK(cache.find(heads, fresh) == h);
  CHECK_FALSE(fresh);
  CHECK(cache.copies() == 3);
  // An operand reaching past the kept range is not the cache's.
  CHECK(cache.find(dense(x.data() + 32, 3, 16), fresh) == nullptr);
  CHECK(cache.find(dense(x.data() + 1, 4, 16), fresh) == nullptr);
}

TEST_CASE("bf16 operand cache: a range kept twice lives until forgotten twice", "[backend][bf16]") {
  std::vector<float> x(32), y(32);
  Bf16OperandCache cache;
  cache.keep(x.data(), 32);
  cache.keep(x.data(), 32);
  cache.keep(y.data(), 32);
  CHECK(cache.kept_ranges() == 2);
  bool fresh = false;
  uint16_t* copy = cache.find(dense(x.data(), 2, 16), fresh);
  cache.forget(x.data());
  CHECK(cache.find(dense(x.data(), 2, 16), fresh) == copy);
  CHECK_FALSE(fresh);
  cache.forget(x.data());
  CHECK(cache.find(dense(x.data(), 2, 16), fresh) == nullptr);
  CHECK(cache.kept_ranges() == 1);
  cache.forget(x.data());  // not kept: nothing happens
  CHECK(cache.kept_ranges() == 1);
  cache.keep(x.data(), 32);  // kept again: the old copy is gone, the next find converts afresh
  cache.find(dense(x.data(), 2, 16), fresh);
  CHECK(fresh);
  cache.clear();
  CHECK(cache.kept_ranges() == 0);
  CHECK(cache.find(dense(y.data(), 2, 16), fresh) == nullptr);
}

TEST_CASE("bf16 operand cache: copies come from one step buffer, freed from the top", "[backend][bf16]") {
  std::vector<float> x(4096), y(1024), z(1024);
  Bf16OperandCache cache;
  bool fresh = false;
  // The first step has no buffer yet: its copies are separate allocations, and clear() sizes the buffer
  // to what the step held at once.
  cache.keep(x.data(), 4096);
  cache.keep(y.data(), 1024);
  cache.find(dense(x.data(), 64, 64), fresh);
  cache.find(dense(y.data(), 16, 64), fresh);
  CHECK(cache.capacity() == 0);
  cache.clear();
  CHECK(cache.capacity() == 4096 + 1024);
  // The next step, same shapes: one after the other in the buffer, and the buffer does not grow.
  cache.keep(x.data(), 4096);
  cache.keep(y.data(), 1024);
  uint16_t* bx = cache.find(dense(x.data(), 64, 64), fresh);
  CHECK(fresh);  // a reused buffer still has to be filled
  uint16_t* by = cache.find(dense(y.data(), 16, 64), fresh);
  CHECK(by == bx + 4096);
  // Forgetting the top frees it for the next copy; forgetting below the top frees nothing until the top
  // goes too.
  cache.forget(y.data());
  cache.keep(z.data(), 1024);
  CHECK(cache.find(dense(z.data(), 16, 64), fresh) == by);
  cache.forget(x.data());
  cache.keep(y.data(), 1024);
  uint16_t* above = cache.find(dense(y.data(), 16, 64), fresh);
  // Over capacity: a separate allocation, not inside the buffer.
  const auto at = reinterpret_cast<uintptr_t>(above), buffer = reinterpret_cast<uintptr_t>(bx);
  CHECK((at < buffer || at >= buffer + sizeof(uint16_t) * static_cast<uintptr_t>(cache.capacity())));
  cache.forget(y.data());
  cache.forget(z.data());  // the top, and the freed x below it
  cache.keep(y.data(), 1024);
  CHECK(cache.find(dense(y.data(), 16, 64), fresh) == bx);
  cache.clear();
  CHECK(cache.capacity() == 4096 + 1024 + 1024);  // the step held three copies at once
}
