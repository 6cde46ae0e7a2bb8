// add_bias, bias_backward, add, axpy, scale, sum_squares, fill, copy, gather_rows, scatter_rows and
// bias_activation_forward
// against the reference on every backend: odd sizes, aliasing, accumulation, a fixed summation order.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "conformance/backends_under_test.h"
#include "ops/copy.h"
#include "tensor/arena.h"
#include "backend/kernel_fixture.h"
#include "support/reference_kernels.h"
#include "util/error.h"

using namespace tt;
using tt::test::for_each_backend;
using tt::test::random_floats;
using tt::test::require_close;
using tt::test::to_double;
using tt::test::upload;

TEST_CASE("add_bias: separate output and in place, on odd shapes and multiples of 4", "[conformance][elementwise]") {
  for_each_backend([](backend::Backend& be) {
    // Multiples of 4 take CUDA's four-column path.
    for (auto [N, D] :
         {std::pair<int64_t, int>{1, 1}, {7, 33}, {129, 517}, {3000, 129}, {1, 4}, {5, 512}, {300, 1536}}) {
      INFO("N=" << N << " D=" << D);
      auto X = random_floats(static_cast<size_t>(N * D), 1), bias = random_floats(D, 2);
      std::vector<double> expected(X.size());
      for (int64_t i = 0; i < N; ++i)
        for (int j = 0; j < D; ++j) expected[i * D + j] = double(X[i * D + j]) + bias[j];
      auto x = upload(be, X), b = upload(be, bias), y = upload(be, std::vector<float>(X.size()));
      be.add_bias(y.f32(), x.f32(), b.f32(), N, D);
      require_close(y.to_host_f32(), expected, 1e-6, 1e-6, "add_bias");
      be.add_bias(x.f32(), x.f32(), b.f32(), N, D);  // y aliases x
      require_close(x.to_host_f32(), expected, 1e-6, 1e-6, "add_bias in place");
    }
  });
}

TEST_CASE("bias_backward accumulates column sums in a fixed order", "[conformance][elementwise]") {
  for_each_backend([](backend::Backend& be) {
    // Row counts below, at and past a 256-row chunk of a two-pass reduction, and a batch's 25k tokens.
    for (auto [N, D] : {std::pair<int64_t, int>{1, 1}, {3, 31}, {1000, 70}, {37, 2049}, {256, 33}, {257, 64},
                        {25000, 512}}) {
      INFO("N=" << N << " D=" << D);
      auto DY = random_floats(static_cast<size_t>(N * D), 3), db0 = random_floats(D, 4);
      auto dy = upload(be, DY), db = upload(be, db0);
      be.bias_backward(db.f32(), dy.f32(), N, D);
      auto expected = to_double(db0);
      reference::bias_backward(expected.data(), DY.data(), N, D);
      const auto first = db.to_host_f32();
      require_close(first, expected, 1e-5, N > 1000 ? 1e-3 : 1e-4, "bias_backward (accumulates)");
      auto again = upload(be, db0);  // the same sums again, bit for bit
      be.bias_backward(again.f32(), dy.f32(), N, D);
      CHECK(again.to_host_f32() == first);
    }
  });
}

TEST_CASE("add, axpy and scale with aliasing, sum_squares in double, fill, copy", "[conformance][elementwise]") {
  for_each_backend([](backend::Backend& be) {
    for (int64_t n : {int64_t{1}, int64_t{17}, int64_t{100003}}) {
      INFO("n=" << n);
      auto A = random_floats(n, 4), B = random_floats(n, 5);
      auto a = upload(be, A), b = upload(be, B), y = upload(be, std::vector<float>(n));
      std::vector<double> e(n);
      for (int64_t i = 0; i < n; ++i) e[i] = double(A[i]) + B[i];
      be.add(y.f32(), a.f32(), b.f32(), n);
      require_close(y.to_host_f32(), e, 1e-6, 1e-7, "add");
      be.add(a.f32(), a.f32(), b.f32(), n);  // y aliases a
      require_close(a.to_host_f32(), e, 1e-6, 1e-7, "add in place");

      y = upload(be, A);
      be.axpy(y.f32(), -0.5f, b.f32(), n);
      for (int64_t i = 0; i < n; ++i) e[i] = double(A[i]) - 0.5 * B[i];
      require_close(y.to_host_f32(), e, 1e-6, 1e-7, "axpy");
      be.scale(y.f32(), 3.0f, n - 1);  // the last element stays
      for (int64_t i = 0; i + 1 < n; ++i) e[i] *= 3.0;
      require_close(y.to_host_f32(), e, 1e-6, 1e-7, "scale");

      double ss = 0.0;
      for (float v : B) ss += double(v) * v;
      const double got = be.sum_squares(b.f32(), n);
      CHECK(got == Approx(ss).epsilon(1e-6));
      CHECK(be.sum_squares(b.f32(), n) == got);  // deterministic

      be.fill(y.f32(), 2.5f, n);
      CHECK(y.to_host_f32() == std::vector<float>(n, 2.5f));
      be.copy(y.f32(), b.f32(), n * sizeof(float));
      CHECK(y.to_host_f32() == B);
    }
    CHECK(be.sum_squares(nullptr, 0) == 0.0);
  });
}

TEST_CASE("sum_squares of three million floats is accumulated in double", "[conformance][elementwise]") {
  for_each_backend([](backend::Backend& be) {
    const int64_t n = 3000017;
    auto X = random_floats(n, 7);
    double want = 0.0;
    for (float v : X) want += double(v) * double(v);
    auto x = upload(be, X);
    // Float partials are allowed (the CPU sums 1024-element blocks in float, ~1e-9 here); a float running
    // sum over all three million would be off by ~1e-4.
    CHECK(be.sum_squares(x.f32(), n) == Approx(want).epsilon(1e-7));
  });
}

TEST_CASE("gather_rows reorders rows, repeats allowed", "[conformance][layout]") {
  for_each_backend([](backend::Backend& be) {
    const int64_t rows = 10, D = 37;
    auto S = random_floats(rows * D, 6);
    auto index = tt::test::random_ids(13, 2, 0, int32_t(rows));
    index[0] = index[1] = 9;
    index[2] = 0;
    auto s = upload(be, S), idx = upload(be, index);
    auto d = upload(be, std::vector<float>(index.size() * D, 0.0f));
    be.gather_rows(d.f32(), s.f32(), idx.i32(), static_cast<int64_t>(index.size()), D);
    std::vector<double> e(index.size() * D);
    reference::gather_rows(e.data(), S.data(), index.data(), static_cast<int64_t>(index.size()), D);
    require_close(d.to_host_f32(), e, 0.0, 1e-30, "gather_rows");
  });
}

TEST_CASE("scatter_rows writes the given rows and leaves the others", "[conformance][layout]") {
  for_each_backend([](backend::Backend& be) {
    const int64_t rows = 12, D = 37;
    const std::vector<int32_t> index = {11, 0, 5, 3, 6};  // distinct, out of order, both ends
    const auto n = static_cast<int64_t>(index.size());
    auto S = random_floats(static_cast<size_t>(n * D), 7), before = random_floats(rows * D, 8);
    auto s = upload(be, S), d = upload(be, before), idx = upload(be, index);
    be.scatter_rows(d.f32(), s.f32(), idx.i32(), n, D);
    std::vector<double> e(before.begin(), before.end());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < D; ++j) e[static_cast<size_t>(index[i] * D + j)] = S[static_cast<size_t>(i * D + j)];
    require_close(d.to_host_f32(), e, 0.0, 1e-30, "scatter_rows");
  });
}

TEST_CASE("upload_at writes host values at flat offsets, download_at reads them back", "[conformance][layout]") {
  for_each_backend([](backend::Backend& be) {
    tensor::Arena scratch(be);
    const std::vector<float> zeros(6 * 5, 0.0f);
    auto x = upload(be, zeros).reshape(tensor::Shape{6, 5});
    const std::vector<int64_t> at = {29, 0, 7, 12};
    const std::vector<float> values = {1.5f, -2.0f, 3.25f, 1e-30f};
    ops::upload_at(x, at, values, scratch);
    CHECK(ops::download_at(x, at, scratch) == values);
    std::vector<float> want = zeros;
    for (size_t i = 0; i < at.size(); ++i) want[static_cast<size_t>(at[i])] = values[i];
    CHECK(x.to_host_f32() == want);
    CHECK_THROWS_WITH(ops::upload_at(x, {3, 30}, {1.0f, 2.0f}, scratch), Catch::Contains("offset 30 outside"));
    CHECK_THROWS_WITH(ops::upload_at(x, {3}, {1.0f, 2.0f}, scratch), Catch::Contains("2 values for 1 offsets"));
  });
}

TEST_CASE("bias_activation_forward: swish and gelu against double, relu as max(0, x)", "[conformance][elementwise]") {
  for_each_backend([](backend::Backend& be) {
    if (be.device() == backend::Device::cuda) {  // an optional kernel CUDA does not have: refused by name
      auto x = upload(be, std::vector<float>(4)), b = upload(be, std::vector<float>(2));
      CHECK_THROWS_AS(be.bias_activation_forward(x.f32(), x.f32(), b.f32(), 2, 2, backend::Activation::gelu),
                      ConfigError);
      return;
    }
    for (auto [N, F] : {std::pair<int64_t, int>{1, 1}, {5, 37}, {300, 130}}) {
      INFO("N=" << N << " F=" << F);
      auto X = random_floats(static_cast<size_t>(N * F), 11), bias = random_floats(F, 12);
      for (auto& v : X) v *= 12.0f;  // well into both tails (|x| up to ~12) and through 0
      for (auto a : {backend::Activation::swish, backend::Activation::gelu, backend::Activation::relu}) {
        auto x = upload(be, X), b = upload(be, bias);
        be.bias_activation_forward(x.f32(), x.f32(), b.f32(), N, F, a);  // in place
        std::vector<double> expected(X.size());
        for (int64_t i = 0; i < N; ++i)
          for (int j = 0; j < F; ++j) {
            const double v = double(X[i * F + j]) + bias[j];
            expected[i * F + j] = a == backend::Activation::swish  ? v / (1.0 + std::exp(-v))
                                  : a == backend::Activation::gelu ? 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)))
                                                                   : std::max(v, 0.0);
          }
        require_close(x.to_host_f32(), expected, 1e-6, 1e-6, "bias_activation_forward");
      }
    }
  });
}
