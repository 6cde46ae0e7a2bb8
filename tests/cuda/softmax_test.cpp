// Attention softmax (padding and causal masks, incremental-decoding offset) and log-softmax against the CPU
// backend. Masked weights must be exactly zero on both.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "cuda/cuda_fixture.h"

using namespace tt;
using namespace tt::test;

namespace {

struct SoftmaxCase {
  int B, H, Tq, Tk;
  bool lengths, causal;
  int query_offset;
};

}  // namespace

TEST_CASE("cuda attention_softmax forward and backward", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  const SoftmaxCase cases[] = {{1, 1, 1, 1, false, false, 0},  {2, 3, 5, 7, false, false, 0},
                               {3, 2, 9, 9, true, false, 0},   {2, 4, 6, 6, true, true, 0},
                               {2, 1, 1, 40, true, true, 39},  {1, 2, 3, 70, false, true, 67},
                               {2, 2, 4, 1000, true, false, 0}};
  for (const SoftmaxCase& c : cases) {
    INFO("B " << c.B << " H " << c.H << " Tq " << c.Tq << " Tk " << c.Tk << " lengths " << c.lengths << " causal "
              << c.causal << " offset " << c.query_offset);
    const size_t n = size_t(c.B) * c.H * c.Tq * c.Tk;
    std::vector<float> s = random_floats(n, 1, -4.0f, 4.0f);
    std::vector<int32_t> lengths(c.B);
    for (int b = 0; b < c.B; ++b) lengths[b] = b == 1 ? 0 : c.Tk - 2 * b;  // 0: the row still keeps key 0
    for (auto& len : lengths) len = std::max(len, 0);
    DeviceVector<float> ds(*gpu, s);
    DeviceVector<int32_t> dlen(*gpu, lengths);
    const float scale = 0.37f;
    gpu->attention_softmax_forward(ds.data(), c.lengths ? dlen.data() : nullptr, c.B, c.H, c.Tq, c.Tk, scale,
                                   c.causal, c.query_offset);
    cpu->attention_softmax_forward(s.data(), c.lengths ? lengths.data() : nullptr, c.B, c.H, c.Tq, c.Tk, scale,
                                   c.causal, c.query_offset);
    std::vector<float> probs = ds.to_host();
    check_close(probs, s, 1e-5, 1e-6);
    for (size_t i = 0; i < n; ++i) {
      if (s[i] == 0.0f) REQUIRE(probs[i] == 0.0f);  // masked: exactly zero
    }
    for (size_t r = 0; r < n / c.Tk; ++r) {
      double sum = 0.0;
      for (int k = 0; k < c.Tk; ++k) sum += probs[r * c.Tk + k];
      REQUIRE(sum == Approx(1.0).epsilon(1e-5));
    }

    std::vector<float> g = random_floats(n, 2);
    DeviceVector<float> dg(*gpu, g), dp(*gpu, s);
    gpu->attention_softmax_backward(dg.data(), dp.data(), c.B, c.H, c.Tq, c.Tk, scale);
    cpu->attention_softmax_backward(g.data(), s.data(), c.B, c.H, c.Tq, c.Tk, scale);
    check_close(dg.to_host(), g, 1e-4, 1e-6);
  }
}

TEST_CASE("cuda log_softmax over vocabulary rows", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  for (auto [N, V] : {std::pair<int64_t, int>{1, 1}, {3, 31}, {5, 8003}, {2, 37001}}) {
    INFO("N " << N << " V " << V);
    std::vector<float> x = random_floats(N * V, 3, -10.0f, 10.0f);
    DeviceVector<float> dx(*gpu, x);
    gpu->log_softmax(dx.data(), N, V);
    cpu->log_softmax(x.data(), N, V);
    check_close(dx.to_host(), x, 1e-5, 1e-5);
  }
}
