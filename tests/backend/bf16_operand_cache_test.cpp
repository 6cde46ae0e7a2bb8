// Bf16OperandCache (backend/cpu/bf16_operand_cache.h), the bookkeeping behind Backend::keep_bf16_operand:
// which operands it holds a copy for, when a copy is fresh (to be converted) or reused, reference-counted
// forgetting, and that buffers are reused after clear() rather than reallocated. Runs on any processor.
#include <catch2/catch.hpp>
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

TEST_CASE("bf16 operand cache: the next step reuses the buffers of the last", "[backend][bf16]") {
  std::vector<float> x(4096), y(1024);
  Bf16OperandCache cache;
  bool fresh = false;
  cache.keep(x.data(), 4096);
  cache.keep(y.data(), 1024);
  uint16_t* bx = cache.find(dense(x.data(), 64, 64), fresh);
  uint16_t* by = cache.find(dense(y.data(), 16, 64), fresh);
  cache.clear();
  // Same shapes, next step: the same buffers, each where it fits.
  cache.keep(y.data(), 1024);
  cache.keep(x.data(), 4096);
  CHECK(cache.find(dense(y.data(), 16, 64), fresh) == by);
  CHECK(fresh);  // a reused buffer still has to be filled
  CHECK(cache.find(dense(x.data(), 64, 64), fresh) == bx);
  cache.forget(x.data());
  // A buffer more than twice the size asked for is not handed out for a small operand.
  cache.keep(y.data() + 512, 512);
  uint16_t* small = cache.find(dense(y.data() + 512, 1, 64), fresh);
  CHECK(small != bx);
}
