// The fused label-smoothed cross-entropy against the CPU backend: loss, nll and the in-place gradient,
// with padding rows (ignore_id) and odd vocabulary sizes.
#include <catch2/catch.hpp>

#include <vector>

#include "cuda/cuda_fixture.h"
#include "support/reference_kernels.h"

using namespace tt;
using namespace tt::test;

TEST_CASE("cuda cross_entropy_forward_backward", "[cuda]") {
  auto gpu = require_cuda();
  auto cpu = cpu_reference();
  const int32_t pad = 0;
  for (auto [N, V] : {std::pair<int64_t, int>{1, 2}, {37, 1001}, {64, 8003}}) {
    for (float eps : {0.0f, 0.1f}) {
      INFO("N " << N << " V " << V << " eps " << eps);
      std::vector<float> logits = random_floats(N * V, 1, -8.0f, 8.0f);
      std::vector<int32_t> targets = random_ids(N, 2, 0, V);
      if (N > 3) targets[3] = pad;  // at least one padding row
      std::vector<float> loss(N, -1.0f), nll(N, -1.0f);
      DeviceVector<float> dlogits(*gpu, logits), dloss(*gpu, loss), dnll(*gpu, nll);
      DeviceVector<int32_t> dtargets(*gpu, targets);
      const float grad_scale = 1.0f / float(N);
      std::vector<double> ref_loss(N), ref_nll(N), ref_grad(N * V);
      reference::cross_entropy_forward_backward(ref_loss.data(), ref_nll.data(), ref_grad.data(), logits.data(),
                                                targets.data(), N, V, eps, pad, grad_scale);
      gpu->cross_entropy_forward_backward(dloss.data(), dnll.data(), dlogits.data(), dtargets.data(), N, V, eps,
                                          pad, grad_scale);
      cpu->cross_entropy_forward_backward(loss.data(), nll.data(), logits.data(), targets.data(), N, V, eps, pad,
                                          grad_scale);
      check_close(dloss.to_host(), loss, 1e-5, 1e-5);
      check_close(dnll.to_host(), nll, 1e-5, 1e-5);
      std::vector<float> grad = dlogits.to_host();
      check_close(grad, logits, 1e-4, 1e-7);
      check_close(dloss.to_host(), ref_loss, 1e-5, 1e-5);
      check_close(dnll.to_host(), ref_nll, 1e-5, 1e-5);
      check_close(grad, ref_grad, 1e-4, 1e-7);
      for (int64_t i = 0; i < N; ++i) {
        if (targets[i] != pad) continue;
        CHECK(dloss.to_host()[i] == 0.0f);
        for (int k = 0; k < V; ++k) REQUIRE(grad[i * V + k] == 0.0f);
      }
    }
  }
}
