// Element sizes and names come from exhaustive switches; a value outside the enum is a bug, not 4 bytes.
#include <catch2/catch.hpp>

#include "tensor/dtype.h"
#include "util/error.h"

using tt::tensor::DType;

TEST_CASE("dtype sizes and names, and an unknown dtype is an internal error", "[tensor]") {
  CHECK(tt::tensor::dtype_size(DType::f32) == 4);
  CHECK(tt::tensor::dtype_size(DType::i32) == 4);
  CHECK(tt::tensor::dtype_name(DType::f32) == "F32");
  CHECK(tt::tensor::dtype_name(DType::i32) == "I32");
  const auto bogus = static_cast<DType>(7);
  CHECK_THROWS_AS(tt::tensor::dtype_size(bogus), tt::InternalError);
  CHECK_THROWS_WITH(tt::tensor::dtype_name(bogus), Catch::Contains("unknown DType 7"));
}
