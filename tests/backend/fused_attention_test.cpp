// Fused attention (attention_forward / attention_backward) on every instruction-set variant: the reference,
// the default composition of the other kernels, finite differences of the forward, the same bits on 1 and
// 2 threads, and a sentence's bits independent of the padding and the batch around it.
#include <catch2/catch.hpp>

#include "backend/cpu/cpu_backend.h"
#include "backend/kernel_fixture.h"
#include "ops/attention.h"
#include "ops/attention_composed.h"
#include "support/reference_kernels.h"

using namespace tt;
using tt::test::random_floats;
using tt::test::require_close;
using tt::test::upload;

namespace {

const backend::DropoutKey kKey{0x5eed, 77};

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

constexpr float kSentinel = 12345.0f;

// Runs forward and backward on `be`: its fused kernels, or (fused = false) ops' composition of the others.
// keep_flags = false: backward gets no dropout flags and draws them again from the key.
Outputs run(backend::Backend& be, const Inputs& in, bool fused = true, bool keep_flags = true) {
  const Case& c = in.c;
  const int D = in.D();
  auto q = upload(be, in.q), kv = upload(be, in.k), g = upload(be, in.dctx), lens = upload(be, in.lens);
  auto ctx = upload(be, std::vector<float>(size_t(c.B) * c.Tq * in.ldc, kSentinel));
  auto probs = upload(be, std::vector<float>(in.scores())), dropped = upload(be, std::vector<float>(in.scores())),
       dprobs = upload(be, std::vector<float>(in.scores()));
  auto flags = tensor::Tensor::zeros(be, tensor::Shape{int64_t(in.scores())}, tensor::DType::u8);
  auto dq = upload(be, std::vector<float>(in.q.size(), kSentinel)), dkv = upload(be, std::vector<float>(in.k.size(), kSentinel));
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
std::vector<float> columns(const std::vector<float>& x, int64_t rows, int64_t ld, int col0, int D) {
  std::vector<float> out;
  for (int64_t r = 0; r < rows; ++r)
    for (int j = 0; j < D; ++j) out.push_back(x[r * ld + col0 + j]);
  return out;
}
std::vector<double> columns(const std::vector<double>& x, int64_t rows, int64_t ld, int col0, int D) {
  std::vector<double> out;
  for (int64_t r = 0; r < rows; ++r)
    for (int j = 0; j < D; ++j) out.push_back(x[r * ld + col0 + j]);
  return out;
}

const Case kCases[] = {
    {1, 1, 1, 1, 1, false, false, 0.0f},   {2, 3, 5, 7, 5, false, true, 0.3f},  {2, 2, 9, 9, 16, true, true, 0.0f},
    {3, 2, 17, 17, 8, true, false, 0.2f},  {2, 1, 33, 40, 20, false, true, 0.1f}, {1, 2, 3, 70, 32, false, true, 0.25f},
    {4, 4, 32, 32, 32, true, true, 0.1f},
};

}  // namespace

TEST_CASE("fused attention matches the reference on every ISA, the same bits on 1 and 2 threads", "[backend][attention]") {
  for (const std::string& isa : backend::cpu::supported_isas()) {
    for (const Case& c : kCases) {
      INFO("isa " << isa << " B=" << c.B << " H=" << c.H << " Tq=" << c.Tq << " Tk=" << c.Tk << " Dh=" << c.Dh
                  << " causal=" << c.causal << " padded=" << c.padded << " p=" << c.p);
      const Inputs in(c, 7);
      backend::cpu::CpuBackend one(1, isa), two(2, isa);
      const Outputs a = run(one, in), b = run(two, in);
      CHECK(a.ctx == b.ctx);
      CHECK(a.probs == b.probs);
      CHECK(a.dq == b.dq);
      CHECK(a.dk == b.dk);

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
}

TEST_CASE("fused attention agrees with the default composition of batched products, softmax and dropout",
          "[backend][attention]") {
  backend::cpu::CpuBackend be(2);
  for (const Case& c : kCases) {
    INFO("B=" << c.B << " H=" << c.H << " Tq=" << c.Tq << " Tk=" << c.Tk << " Dh=" << c.Dh << " p=" << c.p);
    const Inputs in(c, 11);
    const Outputs f = run(be, in), d = run(be, in, false);
    const int D = in.D();
    const int64_t rq = int64_t(c.B) * c.Tq, rk = int64_t(c.B) * c.Tk;
    auto close = [](const std::vector<float>& x, const std::vector<float>& y, const char* what) {
      require_close(x, std::vector<double>(y.begin(), y.end()), 1e-4, 1e-5, what);
    };
    close(f.probs, d.probs, "probs");
    close(columns(f.ctx, rq, in.ldc, 0, D), columns(d.ctx, rq, in.ldc, 0, D), "ctx");
    close(columns(f.dq, rq, in.ldq, 0, D), columns(d.dq, rq, in.ldq, 0, D), "dq");
    close(columns(f.dk, rk, in.ldk, 0, 2 * D), columns(d.dk, rk, in.ldk, 0, 2 * D), "dk, dv");
  }
}

TEST_CASE("fused attention backward agrees with finite differences of its forward", "[backend][attention][grad]") {
  for (const Case& c : {Case{2, 2, 3, 4, 3, true, true, 0.3f}, Case{1, 2, 4, 3, 5, false, false, 0.0f}}) {
    INFO("causal=" << c.causal << " p=" << c.p);
    backend::cpu::CpuBackend be(2);
    Inputs in(c, 21);
    const int D = in.D();
    const Outputs a = run(be, in);
    // loss = sum over the heads' columns of dctx * ctx, so dloss/dctx = dctx.
    auto loss = [&](const Inputs& x) {
      const Outputs o = run(be, x);
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
}

TEST_CASE("fused attention: a sentence's bits do not depend on the padding or the batch around it",
          "[backend][attention]") {
  // The same sentence (4 queries, 5 keys) alone, and second in a batch whose longest sentence pads it to
  // 9 queries and 12 keys (garbage in the padding): its context, weights and gradients are bit-identical.
  backend::cpu::CpuBackend be(2);
  const int H = 2, Dh = 8, D = H * Dh, len_q = 4, len_k = 5;
  Inputs alone(Case{1, H, len_q, len_k, Dh, false, true, 0.0f}, 31);
  alone.lens = {len_k};
  Inputs batch(Case{2, H, 9, 12, Dh, false, true, 0.0f}, 41);
  batch.lens = {12, len_k};
  for (int i = 0; i < len_q; ++i)
    for (int j = 0; j < D; ++j) {
      batch.q[(9 + i) * batch.ldq + j] = alone.q[i * alone.ldq + j];
      batch.dctx[(9 + i) * batch.ldc + j] = alone.dctx[i * alone.ldc + j];
    }
  for (int i = len_q; i < 9; ++i)  // padded query rows carry no gradient
    for (int j = 0; j < D; ++j) batch.dctx[(9 + i) * batch.ldc + j] = 0.0f;
  for (int i = 0; i < len_k; ++i)
    for (int j = 0; j < 2 * D; ++j) batch.k[(12 + i) * batch.ldk + j] = alone.k[i * alone.ldk + j];
  const Outputs a = run(be, alone), b = run(be, batch);
  for (int i = 0; i < len_q; ++i)
    for (int j = 0; j < D; ++j) {
      CHECK(b.ctx[(9 + i) * batch.ldc + j] == a.ctx[i * alone.ldc + j]);
      CHECK(b.dq[(9 + i) * batch.ldq + j] == a.dq[i * alone.ldq + j]);
    }
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < len_q; ++i)
      for (int j = 0; j < 12; ++j) {
        const float pb = b.probs[((size_t(1) * H + h) * 9 + i) * 12 + j];
        CHECK(pb == (j < len_k ? a.probs[(size_t(h) * len_q + i) * len_k + j] : 0.0f));
      }
  for (int i = 0; i < len_k; ++i)
    for (int j = 0; j < 2 * D; ++j) CHECK(b.dk[(12 + i) * batch.ldk + j] == a.dk[i * alone.ldk + j]);
}

TEST_CASE("fused attention backward without the forward's dropout flags draws the same ones again",
          "[backend][attention]") {
  for (const std::string& isa : backend::cpu::supported_isas()) {
    backend::cpu::CpuBackend be(2, isa);
    for (const Case& c : kCases) {
      if (c.p == 0.0f) continue;
      INFO("isa " << isa << " B=" << c.B << " Tq=" << c.Tq << " Tk=" << c.Tk << " p=" << c.p);
      const Inputs in(c, 51);
      const Outputs kept = run(be, in), drawn = run(be, in, true, false);
      CHECK(kept.dq == drawn.dq);
      CHECK(kept.dk == drawn.dk);
    }
  }
}

TEST_CASE("ops::attention keeps one flag byte per weight where the backend fuses, the weights where it composes",
          "[backend][attention]") {
  backend::cpu::CpuBackend be(1);
  CHECK(be.fuses(backend::Backend::Fused::attention));
  CHECK(ops::attention_dropout_dtype(be, false) == tensor::DType::u8);
  if (be.set_matmul_precision(backend::MatmulPrecision::bf16)) {  // bf16 products: the fused tiles are fp32
    CHECK_FALSE(be.fuses(backend::Backend::Fused::attention));
    CHECK(ops::attention_dropout_dtype(be, false) == tensor::DType::f32);
    CHECK(ops::attention_dropout_dtype(be, true) == tensor::DType::bf16);
  }
  // A fused call handed the composition's room (f32) is a caller bug, refused rather than reinterpreted.
  REQUIRE(be.set_matmul_precision(backend::MatmulPrecision::fp32));
  const int B = 1, H = 1, T = 2, Dh = 2;
  auto x = upload(be, std::vector<float>(size_t(B) * T * H * Dh, 0.5f));
  auto probs = upload(be, std::vector<float>(size_t(B) * H * T * T)), wrong = upload(be, std::vector<float>(4));
  const ops::HeadRows rows{x, H * Dh};
  CHECK_THROWS(ops::attention_forward(rows, probs, wrong, rows, rows, rows, tensor::Tensor{}, {B, H, T, T, Dh}, 1.0f,
                                      false, 0.5f, kKey));
}
