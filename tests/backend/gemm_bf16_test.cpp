// The CPU's bf16 product bookkeeping: the held weight copy is what products read while held, and a kept
// operand's copy until it is forgotten; bf16 is offered exactly where oneDNN has bf16 instructions. The
// products' values, on every backend: tests/conformance/gemm_bf16_test.cpp.
#include <catch2/catch.hpp>

#include "backend/backend.h"
#include "backend/bf16_fixture.h"
#include "backend/kernel_fixture.h"
#include "ops/attention_composed.h"
#include "ops/kept_bf16.h"

using namespace tt;
using tt::test::bf16_backend;
using tt::test::random_floats;
using tt::test::upload;

TEST_CASE("bf16 products read held weights from the copy made when held", "[backend][gemm][bf16]") {
  auto be = bf16_backend(1);
  if (!be) return;
  const int M = 8, N = 6, K = 16;
  auto A = random_floats(static_cast<size_t>(M) * K, 1);
  auto W = random_floats(static_cast<size_t>(N) * K + 10, 2);  // a "parameter buffer": W at offset 10
  auto a = upload(*be, A), w = upload(*be, W);
  auto product = [&] {
    auto c = upload(*be, std::vector<float>(static_cast<size_t>(M) * N, 0.0f));
    be->gemm(false, true, M, N, K, 1.0f, a.f32(), K, w.f32() + 10, K, 0.0f, c.f32(), N);
    return c.to_host_f32();
  };
  const auto before = product();
  be->hold_bf16_weights(w.f32(), w.numel());
  CHECK(product() == before);
  // Changing the values while held breaks the contract on purpose: the products still see the copy.
  auto W2 = W;
  for (float& x : W2) x *= 2;
  be->copy_from_host(w.f32(), W2.data(), W2.size() * sizeof(float));
  CHECK(product() == before);
  be->release_bf16_weights();
  const auto after = product();
  for (size_t i = 0; i < after.size(); ++i) CHECK(after[i] == Approx(2 * before[i]).epsilon(1e-6).margin(1e-6));
}

TEST_CASE("bf16 precision is refused without bf16 instructions, and fp32 is always available", "[backend][bf16]") {
  auto be = backend::make_backend("cpu", 1);
  CHECK(be->matmul_precision() == backend::MatmulPrecision::fp32);
  CHECK_FALSE(be->matmul_isa().empty());
  CHECK(be->set_matmul_precision(backend::MatmulPrecision::fp32));
  const bool bf16 = be->set_matmul_precision(backend::MatmulPrecision::bf16);
  // oneDNN's effective ISA names bf16 exactly when it is available (avx512_core_bf16 or avx512_core_amx).
  const std::string isa = be->matmul_isa();
  CHECK(bf16 == (isa == "avx512_core_bf16" || isa == "avx512_core_amx"));
  CHECK(be->matmul_precision() == (bf16 ? backend::MatmulPrecision::bf16 : backend::MatmulPrecision::fp32));
}

TEST_CASE("bf16 products read a kept operand from its first conversion until it is forgotten", "[backend][gemm][bf16]") {
  auto be = bf16_backend(1);
  if (!be) return;
  const int M = 8, N = 6, K = 16;
  auto X = random_floats(static_cast<size_t>(M) * K, 1);
  auto W = random_floats(static_cast<size_t>(N) * K, 2);
  auto x = upload(*be, X), w = upload(*be, W);
  auto product = [&] {
    auto c = upload(*be, std::vector<float>(static_cast<size_t>(M) * N, 0.0f));
    be->gemm(false, true, M, N, K, 1.0f, x.f32(), K, w.f32(), K, 0.0f, c.f32(), N);
    return c.to_host_f32();
  };
  auto X2 = X;
  for (float& v : X2) v *= 2;
  auto doubled = [&](const std::vector<float>& got, const std::vector<float>& base) {
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(2 * base[i]).epsilon(1e-6).margin(1e-6));
  };
  const auto before = product();
  // Outside a held step keep does nothing: the products see new values at once.
  be->keep_bf16_operand(x.f32(), x.numel());
  be->copy_from_host(x.f32(), X2.data(), X2.size() * sizeof(float));
  doubled(product(), before);
  be->forget_bf16_operand(x.f32());
  be->copy_from_host(x.f32(), X.data(), X.size() * sizeof(float));

  auto held = upload(*be, std::vector<float>(4, 0.0f));
  be->hold_bf16_weights(held.f32(), held.numel());
  be->keep_bf16_operand(x.f32(), x.numel());
  be->keep_bf16_operand(x.f32(), x.numel());
  CHECK(product() == before);  // converted here
  // Changing the values while kept breaks the contract on purpose: the products still see the copy, as
  // long as one keep is not yet forgotten.
  be->copy_from_host(x.f32(), X2.data(), X2.size() * sizeof(float));
  CHECK(product() == before);
  be->forget_bf16_operand(x.f32());
  CHECK(product() == before);
  be->forget_bf16_operand(x.f32());
  doubled(product(), before);
  // release_bf16_weights forgets what is still kept.
  be->keep_bf16_operand(x.f32(), x.numel());
  const auto kept = product();
  be->copy_from_host(x.f32(), X.data(), X.size() * sizeof(float));
  CHECK(product() == kept);
  be->release_bf16_weights();
  CHECK(product() == before);
}

TEST_CASE("ops::KeptBf16 keeps an operand until released, once, and moves without a second forget",
          "[backend][gemm][bf16]") {
  auto be = bf16_backend(1);
  if (!be) return;
  const int M = 4, N = 3, K = 8;
  const auto X = random_floats(static_cast<size_t>(M) * K, 1), W = random_floats(static_cast<size_t>(N) * K, 2);
  auto x = upload(*be, X), w = upload(*be, W);
  auto product = [&] {
    auto c = upload(*be, std::vector<float>(static_cast<size_t>(M) * N, 0.0f));
    be->gemm(false, true, M, N, K, 1.0f, x.f32(), K, w.f32(), K, 0.0f, c.f32(), N);
    return c.to_host_f32();
  };
  auto set_x = [&](float factor) {
    auto v = X;
    for (float& e : v) e *= factor;
    be->copy_from_host(x.f32(), v.data(), v.size() * sizeof(float));
  };
  auto held = upload(*be, std::vector<float>(4, 0.0f));
  be->hold_bf16_weights(held.f32(), held.numel());
  const auto before = product();
  {
    ops::KeptBf16 a(x);
    CHECK(product() == before);  // converted here, read from the copy from now on
    set_x(2);                    // against the contract on purpose: the copy shows whether x is still kept
    CHECK(product() == before);
    ops::KeptBf16 b = std::move(a);  // one keep, now held by b
    CHECK_FALSE(a.held());
    CHECK(ops::KeptBf16::alive() == 1);
    a.release();  // moved-from: nothing to forget
    CHECK(product() == before);
    b.release();
    b.release();  // once only
    CHECK(ops::KeptBf16::alive() == 0);
    CHECK(product() != before);  // forgotten: the new values
    set_x(1);
    ops::KeptBf16 c(x);
    CHECK(ops::KeptBf16::alive() == 1);
  }  // c released by its destructor
  CHECK(ops::KeptBf16::alive() == 0);
  set_x(2);
  CHECK(product() != before);
  ops::KeptBf16 none(tensor::Tensor{});  // undefined (and bf16) tensors keep nothing
  CHECK_FALSE(none.held());
  be->release_bf16_weights();
}

TEST_CASE("bf16 attention through kept operands gives the bits of unkept products", "[backend][gemm][bf16]") {
  // The composed attention keeps q, k, v and the weights from forward to backward: its gradients must be
  // the same bits as when every product converts its operands afresh (weights not held: nothing kept).
  auto be = bf16_backend(2);
  if (!be) return;
  const int B = 2, H = 2, T = 5, Dh = 8, D = H * Dh;
  const int64_t ld = 3 * D, n = int64_t{B} * T * ld, scores = int64_t{B} * H * T * T;
  auto run = [&](bool hold) {
    auto qkv = upload(*be, random_floats(static_cast<size_t>(n), 4));
    auto dctx_host = random_floats(static_cast<size_t>(B) * T * D, 5);
    auto ctx = upload(*be, std::vector<float>(static_cast<size_t>(B) * T * D, 0.0f));
    auto dctx = upload(*be, dctx_host);
    auto probs = upload(*be, std::vector<float>(static_cast<size_t>(scores), 0.0f));
    auto dropped = upload(*be, std::vector<float>(static_cast<size_t>(scores), 0.0f));
    auto dprobs = upload(*be, std::vector<float>(static_cast<size_t>(scores), 0.0f));
    auto dqkv = upload(*be, std::vector<float>(static_cast<size_t>(n), 0.0f));
    auto held = upload(*be, std::vector<float>(4, 0.0f));
    if (hold) be->hold_bf16_weights(held.f32(), held.numel());
    const float* q = qkv.f32();
    backend::AttentionForwardArgs f;
    f.z = {B, H, T, T, Dh};
    f.scale = 0.35f, f.causal = true, f.p = 0.25f, f.key = backend::DropoutKey{3, 9};
    f.ctx = {ctx.f32(), D}, f.probs = probs.f32(), f.q = {q, ld}, f.k = {q + D, ld}, f.v = {q + 2 * D, ld};
    REQUIRE_FALSE(be->fuses(backend::Backend::Fused::attention));  // bf16 products: the composition runs
    ops::AttentionKept kept;  // q, k, v, w kept from forward to backward, as a training step does
    ops::composed_attention_forward(*be, f, dropped.f32(), &kept);
    float* dq = dqkv.f32();
    backend::AttentionBackwardArgs b;
    b.z = f.z, b.scale = f.scale, b.p = f.p, b.key = f.key;
    b.dq = {dq, ld}, b.dk = {dq + D, ld}, b.dv = {dq + 2 * D, ld}, b.dctx = {dctx.f32(), D}, b.probs = probs.f32();
    b.q = f.q, b.k = f.k, b.v = f.v;
    ops::composed_attention_backward(*be, b, dprobs.f32(), dropped.f32(), &kept);
    CHECK_FALSE((kept.q.held() || kept.k.held() || kept.v.held() || kept.w.held()));  // backward released them
    CHECK(ops::KeptBf16::alive() == 0);
    if (hold) be->release_bf16_weights();
    return std::make_pair(ctx.to_host_f32(), dqkv.to_host_f32());
  };
  const auto plain = run(false), kept = run(true);
  CHECK(plain.first == kept.first);
  CHECK(plain.second == kept.second);
}

TEST_CASE("bf16: the loss kernel writes its gradient's copy into a kept range, the bits a conversion gives",
          "[backend][gemm][bf16]") {
  auto be = bf16_backend(2);
  if (!be) return;
  const int N = 7, V = 300, D = 16;
  const auto X = random_floats(static_cast<size_t>(N) * V, 1);
  const auto H = random_floats(static_cast<size_t>(N) * D, 2);
  std::vector<int32_t> T{3, 299, -1, 0, 17, 150, 42};  // -1: an ignored row
  auto run = [&](bool keep) {
    auto logits = upload(*be, X), h = upload(*be, H), targets = upload(*be, T);
    auto loss = upload(*be, std::vector<float>(N)), nll = upload(*be, std::vector<float>(N));
    auto dtable = upload(*be, std::vector<float>(static_cast<size_t>(V) * D, 0.0f));
    auto held = upload(*be, std::vector<float>(4, 0.0f));
    be->hold_bf16_weights(held.f32(), held.numel());
    if (keep) be->keep_bf16_operand(logits.f32(), logits.numel());
    be->cross_entropy_forward_backward(loss.f32(), nll.f32(), logits.f32(), targets.i32(), N, V, 0.1f, -1, 0.5f);
    if (keep) {  // break the contract on purpose: the product must read the kernel's copy, not this
      std::vector<float> junk(static_cast<size_t>(N) * V, 7.0f);
      be->copy_from_host(logits.f32(), junk.data(), junk.size() * sizeof(float));
    }
    be->gemm(true, false, V, D, N, 1.0f, logits.f32(), V, h.f32(), D, 1.0f, dtable.f32(), D);  // dtable += g^T h
    if (keep) be->forget_bf16_operand(logits.f32());
    be->release_bf16_weights();
    return dtable.to_host_f32();
  };
  const auto converted = run(false), fused = run(true);
  CHECK(converted == fused);
}
