// Attention test cases shared by the conformance suite (every backend against the reference) and the CPU
// backend's own tests (thread counts, the fused kernel against ops' composition, padding independence):
// operands in wider rows than the heads (as the fused projections leave them), forward then backward
// through the fused kernels or ops' composition.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/backend.h"
#include "backend/kernel_fixture.h"
#include "ops/attention_composed.h"
#include "tensor/tensor.h"

namespace tt::test::attention {


inline const backend::DropoutKey kKey{0x5eed, 77};

struct Case {
  int B, H, Tq, Tk, Dh;
  bool causal, padded;
  float p;
};

// Operands in wider rows (ld > H * Dh, as the fused projections leave them), filled at random.
struct Inputs {
  Case c;
  int64_t ldq, ldk, ldv, ldc;
  std::vector<float> q, k, dctx;  // k holds k | v
  std::vector<int32_t> lens;
  Inputs(Case cc, uint32_t seed) : c(cc) {
    const int D = c.H * c.Dh;
    ldq = D + 3;
    ldk = 2 * D + 1;  // k and v interleaved in one buffer of rows, like the k|v projection
    ldv = ldk;
    ldc = D + 2;
    q = random_floats(size_t(c.B) * c.Tq * ldq, seed, -1.5f, 1.5f);
    k = random_floats(size_t(c.B) * c.Tk * ldk, seed + 1, -1.5f, 1.5f);
    dctx = random_floats(size_t(c.B) * c.Tq * ldc, seed + 2);
    for (int b = 0; b < c.B; ++b) lens.push_back(c.padded ? std::max(1, c.Tk - 3 * b) : c.Tk);
  }
  int D() const { return c.H * c.Dh; }
  size_t scores() const { return size_t(c.B) * c.H * c.Tq * c.Tk; }
};

struct Outputs {
  std::vector<float> ctx, probs, dq, dk, dv;
};

inline constexpr float kSentinel = 12345.0f;

// Runs forward and backward on `be`: its fused kernels, or (fused = false) ops' composition of the others
// (what ops::attention runs where the backend does not fuse: attention_path(be) picks as ops does).
// keep_flags = false: backward gets no dropout flags and draws them again from the key.
inline Outputs run(backend::Backend& be, const Inputs& in, bool fused = true, bool keep_flags = true) {
  const Case& c = in.c;
  const int D = in.D();
  auto q = upload(be, in.q), kv = upload(be, in.k), g = upload(be, in.dctx), lens = upload(be, in.lens);
  auto ctx = upload(be, std::vector<float>(size_t(c.B) * c.Tq * in.ldc, kSentinel));
  auto probs = upload(be, std::vector<float>(in.scores())), dropped = upload(be, std::vector<float>(in.scores())),
       dprobs = upload(be, std::vector<float>(in.scores()));
  auto flags = tensor::Tensor::zeros(be, tensor::Shape{int64_t(in.scores())}, tensor::DType::u8);
  auto dq = upload(be, std::vector<float>(in.q.size(), kSentinel)),
       dkv = upload(be, std::vector<float>(in.k.size(), kSentinel));
  backend::AttentionForwardArgs f;
  f.z = {c.B, c.H, c.Tq, c.Tk, c.Dh};
  f.scale = 1.0f / std::sqrt(float(c.Dh)), f.causal = c.causal, f.p = c.p, f.key = kKey;
  f.ctx = {ctx.f32(), in.ldc}, f.probs = probs.f32(), f.flags = c.p > 0 ? flags.u8() : nullptr;
  f.q = {q.f32(), in.ldq}, f.k = {kv.f32(), in.ldk}, f.v = {kv.f32() + D, in.ldv};
  f.key_lengths = c.padded ? lens.i32() : nullptr;
  backend::AttentionBackwardArgs b;
  b.z = f.z, b.scale = f.scale, b.p = c.p, b.key = kKey;
  b.dq = {dq.f32(), in.ldq}, b.dk = {dkv.f32(), in.ldk}, b.dv = {dkv.f32() + D, in.ldv}, b.dctx = {g.f32(), in.ldc};
  b.probs = probs.f32(), b.flags = keep_flags ? f.flags : nullptr, b.q = f.q, b.k = f.k, b.v = f.v;
  if (fused) {
    REQUIRE(be.fuses(backend::Backend::Fused::attention));
    be.attention_forward(f);
    be.attention_backward(b);
  } else {
    ops::composed_attention_forward(be, f, dropped.f32());
    ops::composed_attention_backward(be, b, dprobs.f32(), dropped.f32());
  }
  Outputs o{ctx.to_host_f32(), probs.to_host_f32(), dq.to_host_f32(), {}, {}};
  const auto both = dkv.to_host_f32();
  o.dk = o.dv = both;  // dk in columns [0, D), dv in [D, 2D) of the same rows
  return o;
}

// The heads' columns [col0, col0 + D) of rows of stride ld, as a flat vector.
inline std::vector<float> columns(const std::vector<float>& x, int64_t rows, int64_t ld, int col0, int D) {
  std::vector<float> out;
  for (int64_t r = 0; r < rows; ++r)
    for (int j = 0; j < D; ++j) out.push_back(x[r * ld + col0 + j]);
  return out;
}
inline std::vector<double> columns(const std::vector<double>& x, int64_t rows, int64_t ld, int col0, int D) {
  std::vector<double> out;
  for (int64_t r = 0; r < rows; ++r)
    for (int j = 0; j < D; ++j) out.push_back(x[r * ld + col0 + j]);
  return out;
}

inline const Case kCases[] = {
    {1, 1, 1, 1, 1, false, false, 0.0f},   {2, 3, 5, 7, 5, false, true, 0.3f},  {2, 2, 9, 9, 16, true, true, 0.0f},
    {3, 2, 17, 17, 8, true, false, 0.2f},  {2, 1, 33, 40, 20, false, true, 0.1f}, {1, 2, 3, 70, 32, false, true, 0.25f},
    {4, 4, 32, 32, 32, true, true, 0.1f},
};

// The path ops::attention takes on `be`: its fused kernels where it has them.
inline bool attention_path(const backend::Backend& be) { return be.fuses(backend::Backend::Fused::attention); }

}  // namespace tt::test::attention
