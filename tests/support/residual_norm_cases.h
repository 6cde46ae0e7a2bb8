// Residual layer norm test cases shared by the conformance suite (every backend against the reference) and
// the CPU backend's own tests (thread counts, the fused kernel against ops' composition): forward with sum
// over x (in place) and backward with dres over dy, as the post-LN residual blocks call them.
#pragma once

#include <catch2/catch.hpp>

#include <vector>

#include "backend/backend.h"
#include "backend/kernel_fixture.h"
#include "ops/layer_norm.h"
#include "tensor/tensor.h"

namespace tt::test::residual_norm {


inline const backend::DropoutKey kKey{0xfeed, 5};
inline constexpr float kEps = 1e-5f;

struct Case {
  int64_t N;
  int D;
  float p;
  bool bias;
};

struct Result {
  std::vector<float> y, sum, mean, rstd, dres, dx, dgamma, dbeta, dbias;
};

// Forward with sum over x (in place) and backward with dres over dy, as residual_block_* call them; with_mask:
// the dropout flags kept in between (else backward draws them again).
inline Result run(backend::Backend& be, const Case& c, const std::vector<float>& X, const std::vector<float>& R,
           const std::vector<float>& bias, const std::vector<float>& G, const std::vector<float>& Bt,
           const std::vector<float>& DY, bool fused = true, bool with_mask = true) {
  const int64_t n = c.N * c.D;
  auto x = upload(be, X), r = upload(be, R), b = upload(be, bias), g = upload(be, G), bt = upload(be, Bt);
  auto y = upload(be, std::vector<float>(n)), mean = upload(be, std::vector<float>(c.N)),
       rstd = upload(be, std::vector<float>(c.N));
  auto dy = upload(be, DY), dx = upload(be, std::vector<float>(n));
  auto mask = tensor::Tensor::empty(be, tensor::Shape{n}, tensor::DType::u8);  // flags land here; garbage before
  const std::vector<uint8_t> garbage(size_t(n), 0xAB);
  be.copy_from_host(mask.u8(), garbage.data(), garbage.size());
  uint8_t* mp = mask.u8();
  auto dg = upload(be, std::vector<float>(c.D, 0.5f)), db = upload(be, std::vector<float>(c.D, -0.25f)),
       dbias = upload(be, std::vector<float>(c.D, 1.0f));
  const float* bp = c.bias ? b.f32() : nullptr;
  float* dbp = c.bias ? dbias.f32() : nullptr;
  if (fused) {
    be.residual_layer_norm_forward(y.f32(), x.f32(), mean.f32(), rstd.f32(), with_mask ? mp : nullptr, x.f32(), bp,
                                   r.f32(), g.f32(), bt.f32(), c.N, c.D, kEps, c.p, kKey);
    be.residual_layer_norm_backward(dy.f32(), dx.f32(), dg.f32(), db.f32(), dbp, dy.f32(), x.f32(), mean.f32(),
                                    rstd.f32(), with_mask ? mp : nullptr, g.f32(), c.N, c.D, c.p, kKey);
  } else {
    ops::composed_residual_layer_norm_forward(be, y.f32(), x.f32(), mean.f32(), rstd.f32(), x.f32(), bp, r.f32(),
                                              g.f32(), bt.f32(), c.N, c.D, kEps, c.p, kKey);
    ops::composed_residual_layer_norm_backward(be, dy.f32(), dx.f32(), dg.f32(), db.f32(), dbp, dy.f32(), x.f32(),
                                               mean.f32(), rstd.f32(), g.f32(), c.N, c.D, c.p, kKey);
  }
  return Result{y.to_host_f32(),  x.to_host_f32(),  mean.to_host_f32(), rstd.to_host_f32(), dy.to_host_f32(),
                dx.to_host_f32(), dg.to_host_f32(), db.to_host_f32(),   dbias.to_host_f32()};
}

struct Data {
  std::vector<float> X, R, bias, G, Bt, DY;
  explicit Data(const Case& c, uint32_t seed)
      : X(random_floats(c.N * c.D, seed, -2.0f, 2.0f)), R(random_floats(c.N * c.D, seed + 1, -1.0f, 3.0f)),
        bias(random_floats(c.D, seed + 2)), G(random_floats(c.D, seed + 3, 0.5f, 1.5f)),
        Bt(random_floats(c.D, seed + 4)),
        DY(random_floats(c.N * c.D, seed + 5)) {}
};

inline const Case kCases[] = {{1, 1, 0.0f, true},    {5, 33, 0.2f, true},   {70, 128, 0.1f, true},
                       {300, 129, 0.0f, false}, {33, 1100, 0.3f, true}, {2048, 128, 0.1f, true}};

// The path ops takes on `be`: its fused kernels where it has them.
inline bool residual_norm_path(const backend::Backend& be) {
  return be.fuses(backend::Backend::Fused::residual_layer_norm);
}

}  // namespace tt::test::residual_norm
