// Dropout kernels against the reference on every backend: the mask is util::dropout_keep (util/rng.h)
// element by element (0 when dropped, x / (1 - p) when kept), the same on every device, for seeds and
// streams with high words set, sizes that are not multiples of the eight-draw blocks, and aliasing.
#include <catch2/catch.hpp>

#include "conformance/backends_under_test.h"
#include "backend/kernel_fixture.h"
#include "support/reference_kernels.h"
#include "util/rng.h"

using namespace tt;
using backend::DropoutKey;
using tt::test::for_each_backend;
using tt::test::random_floats;
using tt::test::require_close;
using tt::test::upload;

namespace {

const DropoutKey kKeys[] = {{0, 0}, {12345, util::rng_stream(util::RngPurpose::dropout, 7, 3)},
                            {0xFEDCBA9876543210ull, 0x0123456789ABCDEFull}};
const int64_t kSizes[] = {1, 3, 5, 1023, 4097, 100001};

}  // namespace

TEST_CASE("dropout_forward and dropout_backward follow the Philox rule, in place too", "[conformance][dropout]") {
  for_each_backend([](backend::Backend& be) {
    for (const DropoutKey& key : kKeys)
      for (int64_t n : kSizes)
        for (float p : {0.0f, 0.1f, 0.5f}) {
          INFO("seed " << key.seed << " stream " << key.stream << " n " << n << " p " << p);
          auto X = random_floats(n, 1);
          auto x = upload(be, X), y = upload(be, std::vector<float>(n));
          be.dropout_forward(y.f32(), x.f32(), n, p, key);
          std::vector<double> e(n);
          reference::dropout_forward(e.data(), X.data(), n, p, key);
          const auto Y = y.to_host_f32();
          require_close(Y, e, 1e-6, 1e-30, "dropout_forward");
          if (p == 0.0f) CHECK(Y == X);  // p = 0 copies
          // Backward applies the same mask (in place: dx aliases dy).
          be.dropout_backward(y.f32(), y.f32(), n, p, key);
          reference::dropout_forward(e.data(), Y.data(), n, p, key);
          require_close(y.to_host_f32(), e, 1e-6, 1e-30, "dropout_backward");
        }
  });
}

TEST_CASE("dropout mask: kept elements scaled by exactly 1 / (1 - p), about 1 - p of them", "[conformance][dropout]") {
  for_each_backend([](backend::Backend& be) {
    const DropoutKey key{777, 4242};
    const int64_t n = 70001;
    const float p = 0.3f;
    auto ones = upload(be, std::vector<float>(n, 1.0f));
    be.dropout_forward(ones.f32(), ones.f32(), n, p, key);
    const auto got = ones.to_host_f32();
    int64_t kept = 0;
    for (int64_t i = 0; i < n; ++i) {
      const bool keep = util::dropout_keep(key.seed, key.stream, uint64_t(i), p);
      REQUIRE((got[i] != 0.0f) == keep);
      if (keep) REQUIRE(got[i] == 1.0f * (1.0f / (1.0f - p)));
      kept += keep;
    }
    CHECK(double(kept) / n == Approx(1 - p).margin(0.01));
  });
}

TEST_CASE("dropout_add_forward = residual + dropout(x), in place on either input", "[conformance][dropout]") {
  for_each_backend([](backend::Backend& be) {
    for (int64_t n : kSizes)
      for (float p : {0.0f, 0.25f}) {
        INFO("n " << n << " p " << p);
        const DropoutKey key = kKeys[1];
        auto R = random_floats(n, 2), X = random_floats(n, 3);
        std::vector<double> e(n);
        reference::dropout_add_forward(e.data(), R.data(), X.data(), n, p, key);
        auto r = upload(be, R), x = upload(be, X), y = upload(be, std::vector<float>(n));
        be.dropout_add_forward(y.f32(), r.f32(), x.f32(), n, p, key);
        const auto Y = y.to_host_f32();
        require_close(Y, e, 1e-6, 1e-6, "dropout_add");
        be.dropout_add_forward(r.f32(), r.f32(), x.f32(), n, p, key);  // y aliases residual
        CHECK(r.to_host_f32() == Y);
        auto r2 = upload(be, R);
        be.dropout_add_forward(x.f32(), r2.f32(), x.f32(), n, p, key);  // y aliases x
        CHECK(x.to_host_f32() == Y);
      }
  });
}

TEST_CASE("bias_relu_dropout_forward and relu_dropout_backward, in place too", "[conformance][dropout]") {
  for_each_backend([](backend::Backend& be) {
    // F odd: the four-uniform groups straddle rows, and the flat index must still be the element's.
    for (auto [N, F] : {std::pair<int64_t, int>{1, 1}, {3, 5}, {3, 7}, {37, 1031}, {65, 1027}, {9, 2100}})
      for (float p : {0.0f, 0.1f, 0.6f}) {
        INFO("N " << N << " F " << F << " p " << p);
        const DropoutKey key = kKeys[2];
        const int64_t n = N * F;
        auto X = random_floats(n, 5), bias = random_floats(F, 6), DY = random_floats(n, 7);
        std::vector<double> e(n);
        reference::bias_relu_dropout_forward(e.data(), X.data(), bias.data(), N, F, p, key);
        auto x = upload(be, X), b = upload(be, bias), y = upload(be, std::vector<float>(n));
        be.bias_relu_dropout_forward(y.f32(), x.f32(), b.f32(), N, F, p, key);
        const auto Y = y.to_host_f32();
        require_close(Y, e, 1e-6, 1e-6, "bias_relu_dropout");
        be.bias_relu_dropout_forward(x.f32(), x.f32(), b.f32(), N, F, p, key);  // y aliases x
        CHECK(x.to_host_f32() == Y);

        std::vector<double> de(n);
        reference::relu_dropout_backward(de.data(), DY.data(), Y.data(), n, p);
        auto dy = upload(be, DY), dx = upload(be, std::vector<float>(n));
        be.relu_dropout_backward(dx.f32(), dy.f32(), y.f32(), n, p);
        const auto DX = dx.to_host_f32();
        require_close(DX, de, 1e-6, 1e-7, "relu_dropout_backward");
        be.relu_dropout_backward(dy.f32(), dy.f32(), y.f32(), n, p);  // dx aliases dy
        CHECK(dy.to_host_f32() == DX);
      }
  });
}
