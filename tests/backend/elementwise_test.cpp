// add_bias, bias_backward, add, axpy, scale, sum_squares, gather_rows, fill and copy against the reference.
#include <catch2/catch.hpp>

#include "backend/backend.h"
#include "backend/kernel_fixture.h"
#include "support/reference_kernels.h"

using namespace tt;
using tt::test::random_floats;
using tt::test::require_close;
using tt::test::to_double;
using tt::test::upload;

TEST_CASE("add_bias and bias_backward on odd shapes", "[backend][elementwise]") {
  auto be = backend::make_backend("cpu", 2);
  for (auto [N, D] : {std::pair<int64_t, int>{1, 1}, {7, 33}, {129, 70}, {3000, 129}}) {
    INFO("N=" << N << " D=" << D);
    auto X = random_floats(static_cast<size_t>(N * D), 1), bias = random_floats(D, 2);
    auto x = upload(*be, X), b = upload(*be, bias);
    be->add_bias(x.f32(), x.f32(), b.f32(), N, D);  // in place (y aliases x)
    std::vector<double> expected(X.size());
    for (int64_t i = 0; i < N; ++i)
      for (int j = 0; j < D; ++j) expected[i * D + j] = double(X[i * D + j]) + bias[j];
    require_close(x.to_host_f32(), expected, 1e-6, 1e-6, "add_bias");

    auto db0 = random_floats(D, 3);
    auto db = upload(*be, db0);
    be->bias_backward(db.f32(), upload(*be, X).f32(), N, D);
    auto dbe = to_double(db0);
    reference::bias_backward(dbe.data(), X.data(), N, D);
    require_close(db.to_host_f32(), dbe, 1e-5, 1e-5 * N, "bias_backward (accumulates)");
  }
}

TEST_CASE("add, axpy, scale, sum_squares, fill, copy", "[backend][elementwise]") {
  auto be = backend::make_backend("cpu", 2);
  for (int64_t n : {int64_t{1}, int64_t{17}, int64_t{100003}}) {
    INFO("n=" << n);
    auto A = random_floats(n, 4), B = random_floats(n, 5);
    auto a = upload(*be, A), b = upload(*be, B);
    be->add(a.f32(), a.f32(), b.f32(), n);
    std::vector<double> e(n);
    for (int64_t i = 0; i < n; ++i) e[i] = double(A[i]) + B[i];
    require_close(a.to_host_f32(), e, 1e-6, 1e-7, "add");

    auto y = upload(*be, A);
    be->axpy(y.f32(), -0.5f, b.f32(), n);
    for (int64_t i = 0; i < n; ++i) e[i] = double(A[i]) - 0.5 * B[i];
    require_close(y.to_host_f32(), e, 1e-6, 1e-7, "axpy");

    be->scale(y.f32(), 3.0f, n);
    for (auto& v : e) v *= 3.0;
    require_close(y.to_host_f32(), e, 1e-6, 1e-7, "scale");

    double ss = 0.0;
    for (float v : B) ss += double(v) * v;
    CHECK(be->sum_squares(b.f32(), n) == Approx(ss).epsilon(1e-6));

    be->fill(y.f32(), 2.5f, n);
    CHECK(y.to_host_f32() == std::vector<float>(n, 2.5f));
    be->copy(y.f32(), b.f32(), n * sizeof(float));
    CHECK(y.to_host_f32() == B);
  }
}

TEST_CASE("gather_rows reorders rows, repeats allowed", "[backend][layout]") {
  auto be = backend::make_backend("cpu", 2);
  const int64_t rows = 5, D = 19;
  auto S = random_floats(rows * D, 6);
  std::vector<int32_t> index{4, 0, 0, 3, 2, 4, 1};
  auto s = upload(*be, S), idx = upload(*be, index);
  auto d = upload(*be, std::vector<float>(index.size() * D, 0.0f));
  be->gather_rows(d.f32(), s.f32(), idx.i32(), static_cast<int64_t>(index.size()), D);
  std::vector<double> e(index.size() * D);
  reference::gather_rows(e.data(), S.data(), index.data(), static_cast<int64_t>(index.size()), D);
  require_close(d.to_host_f32(), e, 0.0, 1e-30, "gather_rows");
}

TEST_CASE("bias_activation_forward: swish and gelu against double, relu as max(0, x)", "[backend][elementwise]") {
  auto be = backend::make_backend("cpu", 2);
  for (auto [N, F] : {std::pair<int64_t, int>{1, 1}, {5, 37}, {300, 130}}) {
    INFO("N=" << N << " F=" << F);
    auto X = random_floats(static_cast<size_t>(N * F), 11), bias = random_floats(F, 12);
    for (auto& v : X) v *= 12.0f;  // well into both tails (|x| up to ~12) and through 0
    for (auto a : {backend::Activation::swish, backend::Activation::gelu, backend::Activation::relu}) {
      auto x = upload(*be, X), b = upload(*be, bias);
      be->bias_activation_forward(x.f32(), x.f32(), b.f32(), N, F, a);  // in place
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
}
