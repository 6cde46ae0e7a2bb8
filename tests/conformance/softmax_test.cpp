// Attention softmax (masks: padded keys and future keys exactly 0, rows sum to 1), its backward against
// the reference and finite differences, and log_softmax, on every backend.
#include <catch2/catch.hpp>
#include <functional>

#include "backend/kernel_fixture.h"
#include "conformance/backends_under_test.h"
#include "support/reference_kernels.h"

using namespace tt;
using tt::test::for_each_backend;
using tt::test::random_floats;
using tt::test::require_close;
using tt::test::upload;

TEST_CASE("attention_softmax_forward: reference, padding and causal masks", "[conformance][softmax]") {
  for_each_backend([&](backend::Backend& be) {
    struct Case { int B, H, Tq, Tk; bool causal; int offset; bool padded; };
    for (Case c : {Case{1, 1, 1, 1, false, 0, false}, Case{2, 3, 5, 7, false, 0, true}, Case{2, 2, 9, 9, true, 0, true},
                   Case{3, 1, 1, 17, true, 16, true}, Case{1, 4, 3, 20, true, 5, false},
                   Case{4, 2, 33, 40, false, 0, true}, Case{2, 1, 1, 40, true, 39, true},
                   Case{1, 2, 3, 70, true, 67, false}, Case{2, 2, 4, 1000, false, 0, true}}) {
      INFO("B=" << c.B << " H=" << c.H << " Tq=" << c.Tq << " Tk=" << c.Tk << " causal=" << c.causal
                << " offset=" << c.offset);
      const size_t n = size_t(c.B) * c.H * c.Tq * c.Tk;
      auto S = random_floats(n, 1, -4.0f, 4.0f);
      std::vector<int32_t> lens(c.B);
      for (int b = 0; b < c.B; ++b) lens[b] = c.padded ? std::max(1, c.Tk - 3 * b) : c.Tk;
      if (c.padded && c.B > 2) lens[c.B - 1] = 0;  // an all-padding row still keeps key 0
      auto s = upload(be, S);
      auto kl = upload(be, lens);
      const float scale = 0.35f;
      be.attention_softmax_forward(s.f32(), c.padded ? kl.i32() : nullptr, c.B, c.H, c.Tq, c.Tk, scale, c.causal,
                                   c.offset);
      std::vector<double> e(n);
      reference::attention_softmax_forward(e.data(), S.data(), c.padded ? lens.data() : nullptr, c.B, c.H, c.Tq, c.Tk,
                                           scale, c.causal, c.offset);
      auto P = s.to_host_f32();
      require_close(P, e, 1e-5, 1e-7, "probs");
      for (int b = 0; b < c.B; ++b)
        for (int h = 0; h < c.H; ++h)
          for (int q = 0; q < c.Tq; ++q) {
            const float* row = P.data() + ((size_t(b) * c.H + h) * c.Tq + q) * c.Tk;
            double sum = 0.0;
            for (int k = 0; k < c.Tk; ++k) {
              sum += row[k];
              bool padded = c.padded && k >= lens[b] && k > 0;
              bool future = c.causal && k > q + c.offset && k > 0;
              if (padded || future) CHECK(row[k] == 0.0f);
              else CHECK(row[k] > 0.0f);
            }
            CHECK(sum == Approx(1.0).epsilon(1e-5));
          }
    }
  });
}

TEST_CASE("attention_softmax_backward matches the reference and finite differences", "[conformance][softmax][grad]") {
  for_each_backend([&](backend::Backend& be) {
    const int B = 2, H = 3, Tq = 4, Tk = 6;
    const size_t n = size_t(B) * H * Tq * Tk;
    const float scale = 0.5f;
    std::vector<int32_t> lens{6, 4};
    auto S = random_floats(n, 2, -2.0f, 2.0f), W = random_floats(n, 3);
    auto forward = [&](const std::vector<float>& sv) {
      auto s = upload(be, sv);
      auto kl = upload(be, lens);
      be.attention_softmax_forward(s.f32(), kl.i32(), B, H, Tq, Tk, scale, true, 1);
      return s.to_host_f32();
    };
    auto P = forward(S);
    auto g = upload(be, W), p = upload(be, P);
    be.attention_softmax_backward(g.f32(), p.f32(), B, H, Tq, Tk, scale);
    auto G = g.to_host_f32();
    std::vector<double> e(n);
    reference::attention_softmax_backward(e.data(), W.data(), P.data(), B, H, Tq, Tk, scale);
    require_close(G, e, 1e-5, 1e-6, "dscores");

    const float h = 1e-2f;
    for (size_t i = 0; i < n; ++i) {
      auto sp = S, sm = S;
      sp[i] += h;
      sm[i] -= h;
      auto pp = forward(sp), pm = forward(sm);
      double lp = 0.0, lm = 0.0;
      for (size_t k = 0; k < n; ++k) {
        lp += double(W[k]) * pp[k];
        lm += double(W[k]) * pm[k];
      }
      CHECK(G[i] == Approx((lp - lm) / (2.0 * h)).margin(1e-3).epsilon(1e-2));
    }
  });
}

TEST_CASE("log_softmax matches the reference", "[conformance][softmax]") {
  for_each_backend([&](backend::Backend& be) {
    for (auto [N, V] : {std::pair<int64_t, int>{1, 1}, {3, 17}, {3, 31}, {50, 8003}, {2, 37001}}) {
      INFO("N=" << N << " V=" << V);
      auto X = random_floats(N * V, 4, -10.0f, 10.0f);
      auto x = upload(be, X);
      be.log_softmax(x.f32(), N, V);
      std::vector<double> e(N * V);
      reference::log_softmax(e.data(), X.data(), N, V);
      require_close(x.to_host_f32(), e, 1e-5, 1e-5, "log_softmax");
    }
  });
}
