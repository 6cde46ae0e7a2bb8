// Attention for training and teacher-forced passes on every backend — its fused kernels where it has
// them, ops' composition of batched products, softmax and dropout elsewhere — against the reference and
// finite differences: padding and causal masks, dropout, operands in rows wider than the heads (columns
// outside them untouched).
#include <catch2/catch.hpp>

#include "conformance/backends_under_test.h"
#include "support/attention_cases.h"
#include "support/reference_kernels.h"

using namespace tt;
using namespace tt::test::attention;
using tt::test::for_each_backend;
using tt::test::require_close;

TEST_CASE("attention, fused where the backend fuses it and ops' composition everywhere, matches the reference",
          "[conformance][attention]") {
  for_each_backend([](backend::Backend& be) {
    for (const bool fused : {false, true}) {
      if (fused && !attention_path(be)) continue;
      for (const Case& c : kCases) {
        INFO((fused ? "fused" : "composed") << " B=" << c.B << " H=" << c.H << " Tq=" << c.Tq << " Tk=" << c.Tk
                    << " Dh=" << c.Dh << " causal=" << c.causal << " padded=" << c.padded << " p=" << c.p);
        const Inputs in(c, 7);
        const Outputs a = run(be, in, fused);

        const int D = in.D();
        const int64_t rq = int64_t(c.B) * c.Tq, rk = int64_t(c.B) * c.Tk;
        std::vector<double> ctx(size_t(rq) * in.ldc), probs(in.scores());
        reference::attention_forward(ctx.data(), in.ldc, probs.data(), in.q.data(), in.ldq, in.k.data(), in.ldk,
                                     in.k.data() + D, in.ldv, c.padded ? in.lens.data() : nullptr, c.B, c.H, c.Tq, c.Tk,
                                     c.Dh, 1.0 / std::sqrt(double(c.Dh)), c.causal, c.p, kKey);
        require_close(a.probs, probs, 1e-5, 1e-7, "probs");
        require_close(columns(a.ctx, rq, in.ldc, 0, D), columns(ctx, rq, in.ldc, 0, D), 1e-5, 1e-5, "ctx");
        for (int64_t r = 0; r < rq; ++r)  // columns outside the heads untouched
          for (int64_t j = D; j < in.ldc; ++j) CHECK(a.ctx[r * in.ldc + j] == kSentinel);

        std::vector<double> dq(in.q.size()), dkv(in.k.size());
        reference::attention_backward(dq.data(), in.ldq, dkv.data(), in.ldk, dkv.data() + D, in.ldv, in.dctx.data(),
                                      in.ldc, probs.data(), in.q.data(), in.ldq, in.k.data(), in.ldk, in.k.data() + D,
                                      in.ldv, c.B, c.H, c.Tq, c.Tk, c.Dh, 1.0 / std::sqrt(double(c.Dh)), c.p, kKey);
        require_close(columns(a.dq, rq, in.ldq, 0, D), columns(dq, rq, in.ldq, 0, D), 1e-4, 1e-5, "dq");
        require_close(columns(a.dk, rk, in.ldk, 0, D), columns(dkv, rk, in.ldk, 0, D), 1e-4, 1e-5, "dk");
        require_close(columns(a.dv, rk, in.ldk, D, D), columns(dkv, rk, in.ldk, D, D), 1e-4, 1e-5, "dv");
        for (int64_t r = 0; r < rk; ++r) CHECK(a.dk[r * in.ldk + 2 * D] == kSentinel);
      }
    }
  });
}

TEST_CASE("attention backward agrees with finite differences of its forward", "[conformance][attention][grad]") {
  for_each_backend([](backend::Backend& be) {
    for (const Case& c : {Case{2, 2, 3, 4, 3, true, true, 0.3f}, Case{1, 2, 4, 3, 5, false, false, 0.0f}}) {
      INFO("causal=" << c.causal << " p=" << c.p);
      Inputs in(c, 21);
      const int D = in.D();
      const Outputs a = run(be, in, attention_path(be));
      // loss = sum over the heads' columns of dctx * ctx, so dloss/dctx = dctx.
      auto loss = [&](const Inputs& x) {
        const Outputs o = run(be, x, attention_path(be));
        double l = 0.0;
        for (int64_t r = 0; r < int64_t(c.B) * c.Tq; ++r)
          for (int j = 0; j < D; ++j) l += double(x.dctx[r * x.ldc + j]) * o.ctx[r * x.ldc + j];
        return l;
      };
      const float h = 1e-2f;
      int checked = 0;
      auto check = [&](std::vector<float> Inputs::*field, const std::vector<float>& grad, int64_t rows, int64_t ld,
                       int col0, const char* what) {
        for (int64_t r = 0; r < rows; ++r)
          for (int j = col0; j < col0 + D; ++j) {
            Inputs plus = in, minus = in;
            (plus.*field)[r * ld + j] += h;
            (minus.*field)[r * ld + j] -= h;
            INFO(what << " row " << r << " column " << j);
            CHECK(grad[r * ld + j] == Approx((loss(plus) - loss(minus)) / (2.0 * h)).margin(2e-3).epsilon(2e-2));
            ++checked;
          }
      };
      check(&Inputs::q, a.dq, int64_t(c.B) * c.Tq, in.ldq, 0, "dq");
      check(&Inputs::k, a.dk, int64_t(c.B) * c.Tk, in.ldk, 0, "dk");
      check(&Inputs::k, a.dv, int64_t(c.B) * c.Tk, in.ldk, D, "dv");  // v: columns D.. of k's rows
      CHECK(checked == D * (int64_t(c.B) * c.Tq + 2 * int64_t(c.B) * c.Tk));
    }
  });
}
