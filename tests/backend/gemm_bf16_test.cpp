// bf16 matrix products (Backend::set_matmul_precision): the result is the fp32-accumulated product of the
// operands rounded to bf16 — close to a double reference on rounded inputs, and measurably not the fp32
// product — on every transpose, padded leading dimensions and attention's strided layout; the held
// weight copy is what products read while held, and a kept operand's copy until it is forgotten.
#include <catch2/catch.hpp>
#include <cstring>

#include "support/bf16.h"
#include "backend/backend.h"
#include "backend/bf16_fixture.h"
#include "backend/kernel_fixture.h"
#include "ops/attention_composed.h"
#include "ops/kept_bf16.h"
#include "support/reference_kernels.h"

using namespace tt;
using tt::test::bf16_backend;
using tt::test::random_floats;
using tt::test::require_close;
using tt::test::upload;

namespace {

std::vector<float> rounded(std::vector<float> v) { return tt::test::rounded_bf16(std::move(v)); }

// Largest |a - b| over the elements.
double max_diff(const std::vector<float>& a, const std::vector<double>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

void check_gemm(backend::Backend& be, bool ta, bool tb, int M, int N, int K, float alpha, float beta, int pad) {
  int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
  auto A = random_floats(static_cast<size_t>((ta ? K : M) * lda), 1);
  auto B = random_floats(static_cast<size_t>((tb ? N : K) * ldb), 2);
  auto C0 = random_floats(static_cast<size_t>(M * ldc), 3);
  auto a = upload(be, A), b = upload(be, B), c = upload(be, C0);
  be.gemm(ta, tb, M, N, K, alpha, a.f32(), lda, b.f32(), ldb, beta, c.f32(), ldc);
  const auto A16 = rounded(A), B16 = rounded(B);
  auto expected = tt::test::to_double(C0), exact = expected;
  reference::gemm(ta, tb, M, N, K, alpha, A16.data(), lda, B16.data(), ldb, beta, expected.data(), ldc);
  reference::gemm(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, exact.data(), ldc);
  INFO("ta=" << ta << " tb=" << tb << " M=" << M << " N=" << N << " K=" << K << " pad=" << pad);
  const auto got = c.to_host_f32();
  require_close(got, expected, 1e-5, 1e-5 * K, "bf16 gemm");
  CHECK(max_diff(got, exact) > 1e-4);  // the operands really were rounded to bf16
}

}  // namespace

TEST_CASE("bf16 gemm is the fp32 product of bf16-rounded operands, on every transpose", "[backend][gemm][bf16]") {
  auto be = bf16_backend(2);
  if (!be) return;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      check_gemm(*be, ta, tb, 17, 33, 19, 1.0f, 0.0f, 0);
      check_gemm(*be, ta, tb, 65, 3, 130, -2.0f, 0.25f, 1);
      check_gemm(*be, ta, tb, 129, 100, 67, 1.0f, 1.0f, 5);
    }
}

TEST_CASE("bf16 gemm_batched runs attention products on the strided B,T,H,Dh layout", "[backend][gemm][bf16]") {
  auto be = bf16_backend(2);
  if (!be) return;
  const int B = 3, H = 4, Tq = 17, Tk = 13, Dh = 12;
  auto Q = random_floats(static_cast<size_t>(B) * Tq * H * Dh, 11);
  auto K = random_floats(static_cast<size_t>(B) * Tk * H * Dh, 12);
  auto C0 = random_floats(static_cast<size_t>(B) * Tq * H * Dh, 14);
  auto q = upload(*be, Q), k = upload(*be, K);
  backend::MatrixStrides qs{int64_t{Tq} * H * Dh, Dh, int64_t{H} * Dh};
  backend::MatrixStrides ks{int64_t{Tk} * H * Dh, Dh, int64_t{H} * Dh};
  backend::MatrixStrides ss{int64_t{H} * Tq * Tk, int64_t{Tq} * Tk, Tk};
  const auto Q16 = rounded(Q), K16 = rounded(K);
  for (int use = 0; use < 2; ++use) {  // the second use runs the cached primitive
    INFO("use " << use);
    auto s = upload(*be, std::vector<float>(static_cast<size_t>(B) * H * Tq * Tk, 0.0f));
    be->gemm_batched(false, true, B, H, Tq, Tk, Dh, 0.25f, q.f32(), qs, k.f32(), ks, 0.0f, s.f32(), ss);
    std::vector<double> expected(static_cast<size_t>(B) * H * Tq * Tk, 0.0), exact = expected;
    reference::gemm_batched(false, true, B, H, Tq, Tk, Dh, 0.25, Q16.data(), qs, K16.data(), ks, 0.0, expected.data(), ss);
    reference::gemm_batched(false, true, B, H, Tq, Tk, Dh, 0.25, Q.data(), qs, K.data(), ks, 0.0, exact.data(), ss);
    const auto scores = s.to_host_f32();
    require_close(scores, expected, 1e-5, 1e-5 * Dh, "scores");
    CHECK(max_diff(scores, exact) > 1e-4);

    // context (beta 1) into the strided [B, Tq, H, Dh] layout, and a transposed A.
    auto P = random_floats(static_cast<size_t>(B) * H * Tq * Tk, 13);
    const auto P16 = rounded(P);
    auto p = upload(*be, P), c = upload(*be, C0);
    be->gemm_batched(false, false, B, H, Tq, Dh, Tk, 1.0f, p.f32(), ss, k.f32(), ks, 1.0f, c.f32(), qs);
    auto ctx = tt::test::to_double(C0);
    reference::gemm_batched(false, false, B, H, Tq, Dh, Tk, 1.0, P16.data(), ss, K16.data(), ks, 1.0, ctx.data(), qs);
    require_close(c.to_host_f32(), ctx, 1e-5, 1e-5 * Tk, "context");
    auto dk = upload(*be, std::vector<float>(K.size(), 0.0f));
    be->gemm_batched(true, false, B, H, Tk, Dh, Tq, 1.0f, p.f32(), ss, q.f32(), qs, 0.0f, dk.f32(), ks);
    std::vector<double> dke(K.size(), 0.0);
    reference::gemm_batched(true, false, B, H, Tk, Dh, Tq, 1.0, P16.data(), ss, Q16.data(), qs, 0.0, dke.data(), ks);
    require_close(dk.to_host_f32(), dke, 1e-5, 1e-5 * Tq, "dK");
  }
}

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
