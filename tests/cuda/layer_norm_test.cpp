// Layer norm forward and backward against the CPU backend: odd widths, one row, aliasing dx with dy,
// accumulation into dgamma/dbeta.
#include <catch2/catch.hpp>

#include <vector>

#include "cuda/cuda_fixture.h"
#include "support/reference_kernels.h"

using namespace tt;
using namespace tt::test;

TEST_CASE("cuda layer_norm forward and backward", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  // The last sizes span several row chunks of the parameter-gradient reduction.
  for (auto [N, D] : {std::pair<int64_t, int>{1, 1}, {1, 33}, {7, 512}, {300, 1027}, {5000, 512}}) {
    INFO("N " << N << " D " << D);
    const float eps = 1e-5f;
    std::vector<float> x = random_floats(N * D, 1, -3.0f, 5.0f), gamma = random_floats(D, 2, 0.5f, 1.5f),
                       beta = random_floats(D, 3), y(N * D), mean(N), rstd(N);
    DeviceVector<float> dx_in(*gpu, x), dgamma_in(*gpu, gamma), dbeta_in(*gpu, beta), dyv(*gpu, y),
        dmean(*gpu, mean), drstd(*gpu, rstd);
    gpu->layer_norm_forward(dyv.data(), dmean.data(), drstd.data(), dx_in.data(), dgamma_in.data(),
                            dbeta_in.data(), N, D, eps);
    cpu->layer_norm_forward(y.data(), mean.data(), rstd.data(), x.data(), gamma.data(), beta.data(), N, D, eps);
    check_close(dyv.to_host(), y, 1e-5, 1e-5);
    std::vector<double> ref_y(N * D), ref_mean(N), ref_rstd(N);
    reference::layer_norm_forward(ref_y.data(), ref_mean.data(), ref_rstd.data(), x.data(), gamma.data(),
                                  beta.data(), N, D, eps);
    check_close(dyv.to_host(), ref_y, 1e-5, 1e-5);
    check_close(dmean.to_host(), mean, 1e-5, 1e-6);
    check_close(drstd.to_host(), rstd, 1e-5, 1e-6);

    // Backward with the CPU's saved statistics on both sides, so only the backward kernel is compared.
    std::vector<float> g = random_floats(N * D, 4), dx(N * D), dgamma = random_floats(D, 5),
                       dbeta = random_floats(D, 6);
    DeviceVector<float> dg(*gpu, g), ddx(*gpu, dx), ddgamma(*gpu, dgamma), ddbeta(*gpu, dbeta), dmean2(*gpu, mean),
        drstd2(*gpu, rstd);
    gpu->layer_norm_backward(ddx.data(), ddgamma.data(), ddbeta.data(), dg.data(), dx_in.data(), dmean2.data(),
                             drstd2.data(), dgamma_in.data(), N, D);
    std::vector<float> dgamma_gpu = ddgamma.to_host(), dbeta_gpu = ddbeta.to_host();
    cpu->layer_norm_backward(dx.data(), dgamma.data(), dbeta.data(), g.data(), x.data(), mean.data(), rstd.data(),
                             gamma.data(), N, D);
    check_close(ddx.to_host(), dx, 1e-4, 1e-4);
    check_close(dgamma_gpu, dgamma, 1e-4, 1e-4);
    check_close(dbeta_gpu, dbeta, 1e-4, 1e-4);

    // dx aliasing dy gives the same input gradient (and accumulates the parameter gradients once more).
    gpu->layer_norm_backward(dg.data(), ddgamma.data(), ddbeta.data(), dg.data(), dx_in.data(), dmean2.data(),
                             drstd2.data(), dgamma_in.data(), N, D);
    check_close(dg.to_host(), dx, 1e-4, 1e-4);
    // ... and the second call added the same column sums again: 2 * (initial + sum) - initial.
    const std::vector<float> dgamma_initial = random_floats(D, 5);
    std::vector<float> dgamma_twice(D);
    for (int j = 0; j < D; ++j) dgamma_twice[j] = 2 * dgamma_gpu[j] - dgamma_initial[j];
    check_close(ddgamma.to_host(), dgamma_twice, 1e-4, 1e-4);
  }
}
