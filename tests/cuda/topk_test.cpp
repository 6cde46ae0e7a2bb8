// CUDA topk against the double reference (tests/support/reference_decode_kernels.h): indices exactly and
// values bit for bit (they are copies of x), on random rows up to a 64k vocabulary and k up to 64, on
// ties across the k-th place (to the lower index), NaN (as -inf), infinities and signed zeros.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "cuda/cuda_fixture.h"
#include "support/reference_decode_kernels.h"
#include "util/error.h"

using namespace tt;
using namespace tt::test;

namespace {

// Runs topk on the GPU and compares with the reference; values compared by their bits.
void check_topk(backend::Backend& gpu, const std::vector<float>& x, int64_t rows, int V, int k) {
  INFO("rows " << rows << " V " << V << " k " << k);
  DeviceVector<float> dx(gpu, x), dvalues(gpu, size_t(rows) * k, 0.0f);
  DeviceVector<int32_t> dindices(gpu, size_t(rows) * k, -1);
  gpu.topk(dvalues.data(), dindices.data(), dx.data(), rows, V, k);
  std::vector<double> want_values(size_t(rows) * k);
  std::vector<int32_t> want_indices(size_t(rows) * k);
  reference::topk(want_values.data(), want_indices.data(), x.data(), rows, V, k);
  const std::vector<int32_t> indices = dindices.to_host();
  const std::vector<float> values = dvalues.to_host();
  size_t bad = 0;
  std::ostringstream first;
  for (size_t i = 0; i < indices.size(); ++i) {
    const float want = x[size_t(i / k) * V + size_t(want_indices[i])];
    const bool same_bits = std::memcmp(&values[i], &want, sizeof want) == 0;
    if ((indices[i] != want_indices[i] || !same_bits) && bad++ < 5)
      first << "  row " << i / k << " place " << i % k << ": cuda " << indices[i] << " (" << values[i] << "), want "
            << want_indices[i] << " (" << want << ")\n";
  }
  INFO(bad << " of " << indices.size() << " places differ:\n" << first.str());
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("cuda topk: random rows, small to 64k vocabularies, k from 1 to 64", "[cuda]") {
  auto gpu = require_cuda();
  check_topk(*gpu, random_floats(7, 1), 7, 1, 1);  // V == 1
  check_topk(*gpu, random_floats(3 * 17, 2), 3, 17, 17);  // k == V: a full sort
  check_topk(*gpu, random_floats(5 * 1000, 3), 5, 1000, 1);
  check_topk(*gpu, random_floats(256 * 8000, 4, -20.0f, 0.0f), 256, 8000, 8);  // beam 4 x batch 64 scores
  check_topk(*gpu, random_floats(16 * 37000, 5), 16, 37000, 64);
  check_topk(*gpu, random_floats(4 * 65536, 6), 4, 65536, 64);
  check_topk(*gpu, random_floats(2 * 5000, 7), 2, 5000, 4096);  // the largest k the kernel takes
}

TEST_CASE("cuda topk: ties go to the lower index, NaN ranks as -inf, -0 ties with +0", "[cuda]") {
  auto gpu = require_cuda();
  // Few distinct values: every place of the top k is decided by the index tie-break.
  std::vector<int32_t> levels = random_ids(64 * 3000, 11, 0, 5);
  std::vector<float> x(levels.begin(), levels.end());
  for (int k : {1, 5, 63, 700}) check_topk(*gpu, x, 64, 3000, k);

  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const int V = 12;
  const std::vector<float> special = {
      nan,  -inf, 0.0f,  -0.0f, 1.0f, inf,  nan,  -0.0f, inf,  -inf, -1.0f, 0.0f,   // mixed
      nan,  nan,  nan,   nan,   nan,  nan,  nan,  nan,   nan,  nan,  nan,   nan,    // all NaN: 0, 1, 2, ...
      -inf, nan,  -inf,  nan,   -3.0f, nan, -inf, -inf,  nan,  -inf, nan,   -inf,   // NaN ties with -inf
      -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f,  // signed zeros tie
  };
  for (int k : {1, 3, 6, 12}) check_topk(*gpu, special, 4, V, k);

  // The mixed row by hand: inf (5), inf (8), 1 (4), then the four zeros in index order.
  DeviceVector<float> dx(*gpu, special), dvalues(*gpu, 7, 0.0f);
  DeviceVector<int32_t> dindices(*gpu, 7, -1);
  gpu->topk(dvalues.data(), dindices.data(), dx.data(), 1, V, 7);
  CHECK(dindices.to_host() == std::vector<int32_t>{5, 8, 4, 2, 3, 7, 11});
  const std::vector<float> values = dvalues.to_host();
  CHECK(values[0] == inf);
  CHECK(values[2] == 1.0f);
  CHECK(std::signbit(values[4]));  // -0 is returned as stored
}

TEST_CASE("cuda topk: a k beyond what the kernel takes is refused with tt::Error", "[cuda]") {
  auto gpu = require_cuda();
  const std::vector<float> x = random_floats(5000, 3);
  DeviceVector<float> dx(*gpu, x), dvalues(*gpu, 5000, 0.0f);
  DeviceVector<int32_t> dindices(*gpu, 5000, 0);
  CHECK_THROWS_AS(gpu->topk(dvalues.data(), dindices.data(), dx.data(), 1, 5000, 4097), Error);
}
