// The CPU kernels exist once per instruction set (baseline, AVX2, AVX-512), chosen at run time. Every
// variant this processor can run must compute the same kernels as the reference; "auto" picks the best.
#include <catch2/catch.hpp>

#include "backend/cpu/cpu_backend.h"
#include "backend/kernel_fixture.h"
#include "support/reference_kernels.h"
#include "util/error.h"

using namespace tt;
using tt::test::random_floats;
using tt::test::require_close;
using tt::test::upload;

TEST_CASE("auto picks the best supported kernels, unknown or unsupported ones are refused", "[backend][isa]") {
  const auto isas = backend::cpu::supported_isas();
  REQUIRE(isas.front() == "baseline");
  CHECK(std::string(backend::cpu::CpuBackend(1).isa()) == isas.back());
  CHECK_THROWS_AS(backend::cpu::CpuBackend(1, "sse9"), ConfigError);
  if (isas.back() != "avx512") CHECK_THROWS_AS(backend::cpu::CpuBackend(1, "avx512"), ConfigError);
}

TEST_CASE("every supported ISA variant matches the reference kernels", "[backend][isa]") {
  for (const std::string& isa : backend::cpu::supported_isas()) {
    INFO("isa " << isa);
    backend::cpu::CpuBackend be(2, isa);
    REQUIRE(std::string(be.isa()) == isa);
    const int N = 37, D = 129;  // odd sizes: vector remainders in every loop
    auto x = random_floats(size_t(N) * D, 11), gamma = random_floats(D, 12), beta = random_floats(D, 13);
    auto tx = upload(be, x), tg = upload(be, gamma), tb = upload(be, beta);
    auto y = upload(be, std::vector<float>(size_t(N) * D)), mean = upload(be, std::vector<float>(N)),
         rstd = upload(be, std::vector<float>(N));
    be.layer_norm_forward(y.f32(), mean.f32(), rstd.f32(), tx.f32(), tg.f32(), tb.f32(), N, D, 1e-5f);
    std::vector<double> ey(size_t(N) * D), em(N), er(N);
    reference::layer_norm_forward(ey.data(), em.data(), er.data(), x.data(), gamma.data(), beta.data(), N, D, 1e-5);
    require_close(y.to_host_f32(), ey, 1e-4, 1e-4, ("layer_norm_forward " + isa).c_str());

    // Masked attention softmax (uses the vectorised exp).
    const int B = 2, H = 3, Tq = 5, Tk = 7;
    auto s = random_floats(size_t(B) * H * Tq * Tk, 14);
    auto ts = upload(be, s);
    std::vector<int32_t> lengths{7, 4};
    auto tl = upload(be, lengths);
    be.attention_softmax_forward(ts.f32(), tl.i32(), B, H, Tq, Tk, 0.5f, true, 2);
    std::vector<double> es(s.size());
    reference::attention_softmax_forward(es.data(), s.data(), lengths.data(), B, H, Tq, Tk, 0.5, true, 2);
    require_close(ts.to_host_f32(), es, 1e-6, 1e-6, ("attention_softmax_forward " + isa).c_str());

    // Dropout: the mask is a pure function of (seed, stream, i) on every ISA (AVX2 Philox included).
    const int64_t n = 5000;
    auto dx = random_floats(n, 15);
    auto tdx = upload(be, dx), tdy = upload(be, std::vector<float>(n));
    be.dropout_forward(tdy.f32(), tdx.f32(), n, 0.25f, backend::DropoutKey{7, 9});
    std::vector<double> ed(n);
    reference::dropout_forward(ed.data(), dx.data(), n, 0.25, backend::DropoutKey{7, 9});
    require_close(tdy.to_host_f32(), ed, 1e-6, 1e-6, ("dropout_forward " + isa).c_str());
  }
}
