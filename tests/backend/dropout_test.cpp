// Dropout kernels: the mask is the Philox rule of util/rng.h, identical on 1 and 2 threads, at any offset.
#include <catch2/catch.hpp>

#include "backend/backend.h"
#include "backend/kernel_fixture.h"
#include "support/reference_kernels.h"
#include "util/rng.h"

using namespace tt;
using tt::test::random_floats;
using tt::test::require_close;
using tt::test::upload;

namespace {
const backend::DropoutKey kKey{0x0123456789abcdefULL, util::rng_stream(util::RngPurpose::dropout, 7, 3)};
}

TEST_CASE("dropout_forward follows the Philox rule and is thread-count independent", "[backend][dropout]") {
  const float p = 0.3f;
  for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{1023}, int64_t{70001}}) {
    INFO("n=" << n);
    auto X = random_floats(n, 1, 0.5f, 1.5f);  // never 0, so a 0 output means dropped
    std::vector<float> out[2];
    for (int threads : {1, 2}) {
      auto be = backend::make_backend("cpu", threads);
      auto x = upload(*be, X);
      be->dropout_forward(x.f32(), x.f32(), n, p, kKey);
      out[threads - 1] = x.to_host_f32();
    }
    CHECK(out[0] == out[1]);  // bit-identical
    std::vector<double> e(n);
    reference::dropout_forward(e.data(), X.data(), n, p, kKey);
    require_close(out[0], e, 1e-6, 1e-30, "dropout");
    int64_t kept = 0;
    for (int64_t i = 0; i < n; ++i) {
      bool keep = util::philox_uniform(kKey.seed, kKey.stream, i) >= p;
      CHECK((out[0][i] != 0.0f) == keep);
      kept += keep;
    }
    if (n > 10000) CHECK(double(kept) / n == Approx(1 - p).margin(0.01));
  }
}

TEST_CASE("dropout_backward applies the forward mask, and p = 0 copies", "[backend][dropout]") {
  auto be = backend::make_backend("cpu", 2);
  const int64_t n = 5000;
  auto ones = upload(*be, std::vector<float>(n, 1.0f));
  auto fwd = upload(*be, std::vector<float>(n, 1.0f));
  be->dropout_forward(fwd.f32(), ones.f32(), n, 0.25f, kKey);
  auto dy = upload(*be, std::vector<float>(n, 1.0f));
  be->dropout_backward(dy.f32(), dy.f32(), n, 0.25f, kKey);
  CHECK(dy.to_host_f32() == fwd.to_host_f32());
  auto X = random_floats(n, 2);
  auto x = upload(*be, X), y = upload(*be, std::vector<float>(n, 0.0f));
  be->dropout_forward(y.f32(), x.f32(), n, 0.0f, kKey);
  CHECK(y.to_host_f32() == X);
}

TEST_CASE("dropout_add_forward = residual + dropout(x)", "[backend][dropout]") {
  const int64_t n = 4099;
  auto R = random_floats(n, 3), X = random_floats(n, 4);
  std::vector<double> e(n);
  reference::dropout_add_forward(e.data(), R.data(), X.data(), n, 0.1, kKey);
  std::vector<float> out[2];
  for (int threads : {1, 2}) {
    auto be = backend::make_backend("cpu", threads);
    auto r = upload(*be, R), x = upload(*be, X);
    be->dropout_add_forward(r.f32(), r.f32(), x.f32(), n, 0.1f, kKey);  // y aliases residual
    out[threads - 1] = r.to_host_f32();
    require_close(out[threads - 1], e, 1e-6, 1e-6, "dropout_add");
  }
  CHECK(out[0] == out[1]);
}

TEST_CASE("bias_relu_dropout_forward and relu_dropout_backward", "[backend][dropout]") {
  for (auto [N, F] : {std::pair<int64_t, int>{1, 1}, {3, 5}, {37, 1031}, {9, 2100}}) {
    INFO("N=" << N << " F=" << F);
    for (float p : {0.0f, 0.2f}) {
      auto X = random_floats(N * F, 5), bias = random_floats(F, 6), DY = random_floats(N * F, 7);
      std::vector<double> e(N * F);
      reference::bias_relu_dropout_forward(e.data(), X.data(), bias.data(), N, F, p, kKey);
      std::vector<float> out[2];
      for (int threads : {1, 2}) {
        auto be = backend::make_backend("cpu", threads);
        auto x = upload(*be, X), b = upload(*be, bias);
        be->bias_relu_dropout_forward(x.f32(), x.f32(), b.f32(), N, F, p, kKey);
        out[threads - 1] = x.to_host_f32();
        require_close(out[threads - 1], e, 1e-6, 1e-6, "bias_relu_dropout");
      }
      CHECK(out[0] == out[1]);

      auto be = backend::make_backend("cpu", 2);
      auto y = upload(*be, out[0]), dy = upload(*be, DY);
      be->relu_dropout_backward(dy.f32(), dy.f32(), y.f32(), N * F, p);
      std::vector<double> de(N * F);
      reference::relu_dropout_backward(de.data(), DY.data(), out[0].data(), N * F, p);
      require_close(dy.to_host_f32(), de, 1e-6, 1e-7, "relu_dropout_backward");
    }
  }
}
