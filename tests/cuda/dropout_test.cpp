// Dropout kernels: the CUDA masks must equal the CPU masks bit for bit (both follow util/rng.h's rule), so
// kept values, which are the same float product on both devices, must be exactly equal too.
#include <catch2/catch.hpp>

#include <vector>

#include "cuda/cuda_fixture.h"
#include "util/rng.h"

using namespace tt;
using namespace tt::test;
using backend::DropoutKey;

namespace {

// Seeds and streams with high words set, and sizes that are not multiples of the four-uniform groups.
const DropoutKey kKeys[] = {{0, 0}, {12345, util::rng_stream(util::RngPurpose::dropout, 7, 3)},
                            {0xFEDCBA9876543210ull, 0x0123456789ABCDEFull}};
const int64_t kSizes[] = {1, 3, 5, 4097, 100001};

}  // namespace

TEST_CASE("cuda dropout_forward/backward: the CPU mask, bit for bit", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  for (const DropoutKey& key : kKeys) {
    for (int64_t n : kSizes) {
      for (float p : {0.0f, 0.1f, 0.5f}) {
        INFO("seed " << key.seed << " stream " << key.stream << " n " << n << " p " << p);
        std::vector<float> x = random_floats(n, 1), y(n);
        DeviceVector<float> dx(*gpu, x), dy(*gpu, y);
        gpu->dropout_forward(dy.data(), dx.data(), n, p, key);
        cpu->dropout_forward(y.data(), x.data(), n, p, key);
        check_equal(dy.to_host(), y);
        // In place backward (dx aliases dy) applies the same mask again.
        gpu->dropout_backward(dy.data(), dy.data(), n, p, key);
        cpu->dropout_backward(y.data(), y.data(), n, p, key);
        check_equal(dy.to_host(), y);
      }
    }
  }
}

TEST_CASE("cuda dropout mask follows philox_uniform element by element", "[cuda]") {
  auto gpu = require_cuda();
  const DropoutKey key{777, 4242};
  const int64_t n = 1031;
  const float p = 0.3f;
  DeviceVector<float> ones(*gpu, size_t(n), 1.0f);
  gpu->dropout_forward(ones.data(), ones.data(), n, p, key);
  std::vector<float> got = ones.to_host();
  int kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool keep = util::philox_uniform(key.seed, key.stream, uint64_t(i)) >= p;
    REQUIRE((got[i] != 0.0f) == keep);
    if (keep) REQUIRE(got[i] == 1.0f * (1.0f / (1.0f - p)));
    kept += keep;
  }
  CHECK(kept > n / 2);  // ~70 % kept
  CHECK(kept < n * 9 / 10);
}

TEST_CASE("cuda dropout_add_forward: residual + dropout(x), in place on either input", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  for (int64_t n : kSizes) {
    for (float p : {0.0f, 0.25f}) {
      INFO("n " << n << " p " << p);
      const DropoutKey key = kKeys[1];
      std::vector<float> r = random_floats(n, 2), x = random_floats(n, 3), y(n);
      DeviceVector<float> dr(*gpu, r), dx(*gpu, x), dy(*gpu, y);
      gpu->dropout_add_forward(dy.data(), dr.data(), dx.data(), n, p, key);
      cpu->dropout_add_forward(y.data(), r.data(), x.data(), n, p, key);
      check_equal(dy.to_host(), y);
      gpu->dropout_add_forward(dr.data(), dr.data(), dx.data(), n, p, key);  // y aliases residual
      check_equal(dr.to_host(), y);
      DeviceVector<float> dr2(*gpu, r);
      gpu->dropout_add_forward(dx.data(), dr2.data(), dx.data(), n, p, key);  // y aliases x
      check_equal(dx.to_host(), y);
    }
  }
}

TEST_CASE("cuda bias_relu_dropout_forward and relu_dropout_backward", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  // F odd: the four-uniform groups straddle rows, and the flat index must still be the element's.
  for (auto [N, F] : {std::pair<int64_t, int>{1, 1}, {3, 7}, {65, 1027}}) {
    for (float p : {0.0f, 0.1f, 0.6f}) {
      INFO("N " << N << " F " << F << " p " << p);
      const DropoutKey key = kKeys[2];
      const int64_t n = N * F;
      std::vector<float> x = random_floats(n, 4), bias = random_floats(F, 5), y(n);
      DeviceVector<float> dx(*gpu, x), dbias(*gpu, bias), dy(*gpu, y);
      gpu->bias_relu_dropout_forward(dy.data(), dx.data(), dbias.data(), N, F, p, key);
      cpu->bias_relu_dropout_forward(y.data(), x.data(), bias.data(), N, F, p, key);
      check_equal(dy.to_host(), y);
      gpu->bias_relu_dropout_forward(dx.data(), dx.data(), dbias.data(), N, F, p, key);  // y aliases x
      check_equal(dx.to_host(), y);

      std::vector<float> g = random_floats(n, 6), dxh(n);
      DeviceVector<float> dg(*gpu, g), ddx(*gpu, dxh);
      gpu->relu_dropout_backward(ddx.data(), dg.data(), dy.data(), n, p);
      cpu->relu_dropout_backward(dxh.data(), g.data(), y.data(), n, p);
      check_equal(ddx.to_host(), dxh);
      gpu->relu_dropout_backward(dg.data(), dg.data(), dy.data(), n, p);  // dx aliases dy
      check_equal(dg.to_host(), dxh);
    }
  }
}
