// Helpers shared by the kernel tests: deterministic random inputs, device round trips through Tensor,
// and element-wise comparison against the double-precision reference (support/reference_kernels.h).
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <vector>

#include "backend/backend.h"
#include "support/random_inputs.h"
#include "tensor/tensor.h"

namespace tt::test {

inline tensor::Tensor upload(backend::Backend& be, const std::vector<float>& v) {
  return tensor::Tensor::from_host(be, tensor::Shape{static_cast<int64_t>(v.size())}, v);
}
inline tensor::Tensor upload(backend::Backend& be, const std::vector<int32_t>& v) {
  return tensor::Tensor::from_host(be, tensor::Shape{static_cast<int64_t>(v.size())}, v);
}

// Largest |actual - expected| / (atol + rtol * |expected|); <= 1 means every element is within tolerance.
// Reports the worst element so a failure says where.
inline void require_close(const std::vector<float>& actual, const std::vector<double>& expected, double rtol,
                          double atol, const char* what = "") {
  REQUIRE(actual.size() == expected.size());
  double worst = 0.0;
  size_t at = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    double e = std::abs(static_cast<double>(actual[i]) - expected[i]) / (atol + rtol * std::abs(expected[i]));
    if (!(e <= worst)) {  // also catches NaN
      worst = e;
      at = i;
      if (std::isnan(e)) break;
    }
  }
  INFO(what << ": worst element " << at << " actual " << (actual.empty() ? 0.0f : actual[at]) << " expected "
            << (expected.empty() ? 0.0 : expected[at]) << " (error/tolerance = " << worst << ")");
  CHECK(worst <= 1.0);
}

inline std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

}  // namespace tt::test
