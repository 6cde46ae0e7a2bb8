// The CPU's fused attention (attention_forward / attention_backward): the same bits on 1 and 2 threads on
// every instruction-set variant, a sentence's bits independent of the padding and the batch around it,
// dropout flags drawn again when not kept. Against the reference and finite differences, fused and
// composed, on every backend: tests/conformance/attention_test.cpp.
#include <catch2/catch.hpp>

#include "backend/cpu/cpu_backend.h"
#include "backend/kernel_fixture.h"
#include "ops/attention.h"
#include "support/attention_cases.h"

using namespace tt;
using tt::test::upload;

using namespace tt::test::attention;

TEST_CASE("fused attention gives the same bits on 1 and 2 threads, on every ISA", "[backend][attention]") {
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
    }
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
