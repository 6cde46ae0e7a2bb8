// The resampling generator must draw what numpy.random.default_rng(seed) draws (values printed by
// numpy 2.4 for the same calls), so that paired tests resample the same segments as sacreBLEU.
#include <catch2/catch.hpp>

#include "metrics/numpy_random.h"
#include "metrics/results_table.h"

using namespace tt::metrics;

TEST_CASE("default_rng(seed).choice(n, replace=True) and integers(2, dtype=bool)", "[metrics]") {
  NumpyRandom a(12345);
  CHECK(a.integers(1000, 8) == std::vector<uint32_t>{699, 227, 788, 316, 204, 797, 642, 676});
  NumpyRandom b(7);
  CHECK(b.integers(10, 12) == std::vector<uint32_t>{9, 6, 6, 8, 5, 7, 8, 2, 0, 3, 2, 8});
  NumpyRandom c(7);
  std::vector<uint8_t> want{1, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1, 0,
                            0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 1, 0, 1, 0, 1};
  CHECK(c.booleans(40) == want);
  NumpyRandom d(12345);
  CHECK(d.next64() == 4193609425186963869ULL);
}

TEST_CASE("floats are printed as Python's repr prints them", "[metrics]") {
  CHECK(python_float_repr(1e16) == "1e+16");
  CHECK(python_float_repr(1e-5) == "1e-05");
  CHECK(python_float_repr(0.0001) == "0.0001");
  CHECK(python_float_repr(33.798010153111036) == "33.798010153111036");
  CHECK(python_float_repr(100.0) == "100.0");
  CHECK(python_float_repr(1.0 / 3) == "0.3333333333333333");
  CHECK(python_float_repr(123456789012345678.0) == "1.2345678901234568e+17");
}
