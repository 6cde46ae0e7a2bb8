// The tied output projection and the label-smoothed cross-entropy: values against a host reference in
// double, padding ignored, and finite-difference gradients for hidden states and the table.
#include <catch2/catch.hpp>

#include <cmath>

#include "backend/backend.h"
#include "nn/loss.h"
#include "ops/embedding.h"
#include "support/grad_check.h"

using namespace tt;
using tensor::Shape;
using tensor::Tensor;

namespace {

struct Reference {
  double loss = 0, nll = 0;
};

// Label-smoothed CE in double: q = (1 - eps) onehot + eps / V.
Reference reference(const std::vector<float>& logits, const std::vector<int32_t>& targets, int V, double eps,
                    int32_t pad) {
  Reference r;
  for (size_t n = 0; n < targets.size(); ++n) {
    if (targets[n] == pad) continue;
    double max = -1e300, z = 0;
    for (int v = 0; v < V; ++v) max = std::max(max, double(logits[n * V + v]));
    for (int v = 0; v < V; ++v) z += std::exp(logits[n * V + v] - max);
    const double lse = max + std::log(z);
    double smooth = 0;
    for (int v = 0; v < V; ++v) smooth += lse - logits[n * V + v];
    const double nll = lse - logits[n * V + targets[n]];
    r.nll += nll;
    r.loss += (1 - eps) * nll + eps / V * smooth;
  }
  return r;
}

}  // namespace

TEST_CASE("label-smoothed loss and tied projection: values and gradients", "[nn][loss][grad]") {
  auto be = backend::make_backend("cpu", 1);
  for (int V : {13, 17, 40}) {
    const int N = 7, D = 8;
    const float eps = 0.1f;
    const int32_t pad = 0;
    std::vector<int32_t> targets{V - 1, 4, 0, 5, V - 1, 0, 1};
    Tensor hidden = test::random_tensor(*be, Shape{N, D}, 1, 1.0f);
    Tensor table = test::random_tensor(*be, Shape{V, D}, 2, 1.0f);
    tensor::Arena ids_arena(*be), arena(*be);
    Tensor t = ops::upload_ids(ids_arena, targets, Shape{N}, V, "target");
    auto loss = [&] {
      tensor::ArenaScope scope(arena);
      Tensor logits = arena.allocate(Shape{N, V});
      nn::output_projection_forward(logits, hidden, table, tensor::Tensor{});
      return nn::label_smoothed_loss(logits, t, targets, eps, pad, 0.0f, arena).loss_sum;
    };
    Tensor logits = Tensor::empty(*be, Shape{N, V});
    nn::output_projection_forward(logits, hidden, table, tensor::Tensor{});
    const Reference ref = reference(logits.to_host_f32(), targets, V, eps, pad);
    const float grad_scale = 1.0f;
    auto stats = nn::label_smoothed_loss(logits, t, targets, eps, pad, grad_scale, arena);
    CHECK(stats.tokens == 5);
    CHECK(stats.loss_sum == Approx(ref.loss).epsilon(1e-5));
    CHECK(stats.nll_sum == Approx(ref.nll).epsilon(1e-5));
    // logits now hold the gradient; padded rows are exactly 0.
    auto dl = logits.to_host_f32();
    for (int v = 0; v < V; ++v) CHECK(dl[size_t(2) * V + v] == 0.0f);
    Tensor dhidden = Tensor::empty(*be, Shape{N, D});
    Tensor dtable = Tensor::zeros(*be, Shape{V, D});
    nn::output_projection_backward(dhidden, dtable, tensor::Tensor{}, logits, hidden, table);
    INFO("V = " << V);
    auto rh = test::check_gradient("dhidden", hidden, dhidden.to_host_f32(), test::sample_coords(N * D, 56, 1), loss,
                                   1e-3);
    INFO(rh.report);
    CHECK(rh.ok());
    auto rt = test::check_gradient("dtable", table, dtable.to_host_f32(), test::sample_coords(V * D, 200, 2), loss,
                                   1e-3);
    INFO(rt.report);
    CHECK(rt.ok());
  }
}
