// Adam against the formula on every backend: a worked example by hand and the reference over several
// steps, with and without decoupled weight decay, and the bf16 copy of the weights it may write.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "backend/kernel_fixture.h"
#include "conformance/backends_under_test.h"
#include "support/reference_kernels.h"
#include "util/bf16.h"

using namespace tt;
using tt::test::for_each_backend;
using tt::test::random_floats;
using tt::test::require_close;
using tt::test::to_double;
using tt::test::upload;

TEST_CASE("adam_step on worked numbers", "[conformance][adam]") {
  for_each_backend([](backend::Backend& be) {
    // Step 1 from m = v = 0: mhat = g, vhat = g^2, so the update is lr * g / (|g| + eps) ~ lr * sign(g).
    auto p = upload(be, std::vector<float>{1.0f, -2.0f}), m = upload(be, std::vector<float>{0.0f, 0.0f}),
         v = upload(be, std::vector<float>{0.0f, 0.0f}), g = upload(be, std::vector<float>{0.5f, -0.25f});
    be.adam_step(p.f32(), m.f32(), v.f32(), g.f32(), 2, 0.1f, 0.9f, 0.98f, 1e-9f, 0.0f, 1, nullptr);
    auto pv = p.to_host_f32(), mv = m.to_host_f32(), vv = v.to_host_f32();
    CHECK(pv[0] == Approx(0.9).epsilon(1e-6));
    CHECK(pv[1] == Approx(-1.9).epsilon(1e-6));
    CHECK(mv[0] == Approx(0.05).epsilon(1e-6));     // (1 - 0.9) * 0.5
    CHECK(vv[1] == Approx(0.00125).epsilon(1e-6));  // (1 - 0.98) * 0.0625
    // Step 2 with g = 0: m = 0.045, v = 0.0049; mhat = 0.045 / 0.19, vhat = 0.0049 / 0.0396.
    auto zero = upload(be, std::vector<float>{0.0f, 0.0f});
    be.adam_step(p.f32(), m.f32(), v.f32(), zero.f32(), 2, 0.1f, 0.9f, 0.98f, 1e-9f, 0.0f, 2, nullptr);
    double mhat = 0.045 / 0.19, vhat = 0.0049 / (1 - 0.98 * 0.98);
    CHECK(p.to_host_f32()[0] == Approx(0.9 - 0.1 * mhat / std::sqrt(vhat)).epsilon(1e-5));
  });
}

TEST_CASE("adam_step with and without weight decay matches the reference over steps", "[conformance][adam]") {
  for_each_backend([](backend::Backend& be) {
    for (float decay : {0.0f, 0.01f}) {
      INFO("weight decay " << decay);
      const int64_t n = 100003;
      auto P = random_floats(n, 1), M = random_floats(n, 2, -0.1f, 0.1f), V = random_floats(n, 3, 0.0f, 0.01f);
      auto p = upload(be, P), m = upload(be, M), v = upload(be, V);
      auto pe = to_double(P), me = to_double(M), ve = to_double(V);
      for (int64_t step = 1; step <= 3; ++step) {
        auto G = random_floats(n, 10 + uint32_t(step));
        auto g = upload(be, G);
        be.adam_step(p.f32(), m.f32(), v.f32(), g.f32(), n, 1e-3f, 0.9f, 0.98f, 1e-9f, decay, step, nullptr);
        reference::adam_step(pe.data(), me.data(), ve.data(), G.data(), n, 1e-3, 0.9, 0.98, 1e-9, decay, step);
      }
      require_close(p.to_host_f32(), pe, 1e-5, 1e-6, "param");
      require_close(m.to_host_f32(), me, 1e-5, 1e-7, "m");
      require_close(v.to_host_f32(), ve, 1e-5, 1e-9, "v");
    }
  });
}

TEST_CASE("adam_step writes the updated weights' bf16 copy in the same pass", "[conformance][adam]") {
  // bf16 training's copy of the weights: what a separate conversion would give (nearest even, NaN kept),
  // and the fp32 update exactly as without it. n is not a multiple of any block or vector width.
  for_each_backend([](backend::Backend& be) {
    const int64_t n = 100003;
    auto P = random_floats(n, 1), M = random_floats(n, 2, -0.1f, 0.1f), V = random_floats(n, 3, 0.0f, 0.01f);
    auto G = random_floats(n, 4);
    P[17] = std::nanf("");
    auto plain = upload(be, P), fused = upload(be, P), m1 = upload(be, M), m2 = upload(be, M), v1 = upload(be, V),
         v2 = upload(be, V), g = upload(be, G);
    auto copy = upload(be, std::vector<float>(static_cast<size_t>(n / 2 + 1), 0.0f));  // n bf16 values
    auto* copy16 = reinterpret_cast<uint16_t*>(copy.f32());
    be.adam_step(plain.f32(), m1.f32(), v1.f32(), g.f32(), n, 1e-3f, 0.9f, 0.98f, 1e-9f, 0.01f, 3, nullptr);
    be.adam_step(fused.f32(), m2.f32(), v2.f32(), g.f32(), n, 1e-3f, 0.9f, 0.98f, 1e-9f, 0.01f, 3, copy16);
    const auto expect = plain.to_host_f32(), got = fused.to_host_f32(), words = copy.to_host_f32();
    REQUIRE(std::memcmp(expect.data(), got.data(), expect.size() * sizeof(float)) == 0);
    std::vector<uint16_t> bf16(static_cast<size_t>(n));
    std::memcpy(bf16.data(), words.data(), bf16.size() * sizeof(uint16_t));
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i)
      if (!std::isnan(expect[i])) wrong += bf16[i] != util::to_bf16(expect[i]);
    CHECK(wrong == 0);
    CHECK(std::isnan(util::from_bf16(bf16[17])));  // a NaN (its payload is the device's own)
  });
}
