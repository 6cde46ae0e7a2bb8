// Kernels that write the bf16 copy of what they produce (bf16 training): a range kept before the kernel
// gets its copy from the kernel, and the next product reads that copy — the bits a conversion of the
// kernel's fp32 output gives. Each case overwrites the fp32 output with junk after the kernel, so a kernel
// that did not write the copy, or a product that looked for it under another layout, fails the check.
#include <catch2/catch.hpp>
#include <functional>

#include "backend/backend.h"
#include "backend/bf16_fixture.h"
#include "backend/kernel_fixture.h"

using namespace tt;
using tt::test::random_floats;
using tt::test::upload;

namespace {

// One producer: `out` is what `kernel` writes (its inputs are uploaded already).
struct Producer {
  tensor::Tensor out;
  std::function<void()> kernel;
};

// out as A [M, K] of x W^T, W [5, K]: a Linear reading the kernel's output.
std::vector<float> linear_of(backend::Backend& be, const tensor::Tensor& out, int M, int K) {
  const int N = 5;
  auto w = upload(be, random_floats(static_cast<size_t>(N) * K, 77));
  auto c = upload(be, std::vector<float>(static_cast<size_t>(M) * N, 0.0f));
  be.gemm(false, true, M, N, K, 1.0f, out.f32(), K, w.f32(), K, 0.0f, c.f32(), N);
  return c.to_host_f32();
}

// The product's result when it converts the kernel's output itself, and when it reads the kernel's copy.
void check_copy(backend::Backend& be, const std::function<Producer()>& make,
                const std::function<std::vector<float>(const tensor::Tensor&)>& consume) {
  auto run = [&](bool keep) {
    auto held = upload(be, std::vector<float>(4, 0.0f));
    be.hold_bf16_weights(held.f32(), held.numel());
    Producer p = make();
    if (keep) be.keep_bf16_operand(p.out.f32(), p.out.numel());
    p.kernel();
    if (keep) {  // break the contract on purpose: the product must read the kernel's copy, not this
      std::vector<float> junk(static_cast<size_t>(p.out.numel()), 7.0f);
      be.copy_from_host(p.out.f32(), junk.data(), junk.size() * sizeof(float));
    }
    auto result = consume(p.out);
    if (keep) be.forget_bf16_operand(p.out.f32());
    be.release_bf16_weights();
    return result;
  };
  const auto converted = run(false), fused = run(true);
  CHECK(converted == fused);
}

constexpr int N = 37, D = 48, F = 96;

}  // namespace

TEST_CASE("bf16 copies: the FFN's bias + ReLU + dropout and its backward write the copy fc2 and fc1 read",
          "[backend][bf16]") {
  auto be = tt::test::bf16_backend(2);
  if (!be) return;
  for (float p : {0.0f, 0.3f}) {
    INFO("p = " << p);
    check_copy(
        *be,
        [&] {
          auto x = upload(*be, random_floats(static_cast<size_t>(N) * F, 1));
          auto bias = upload(*be, random_floats(F, 2));
          return Producer{x, [&be, x, bias, p] {
                            be->bias_relu_dropout_forward(x.f32(), x.f32(), bias.f32(), N, F, p,
                                                          backend::DropoutKey{5, 6});
                          }};
        },
        [&](const tensor::Tensor& out) { return linear_of(*be, out, N, F); });
    check_copy(
        *be,
        [&] {
          auto dy = upload(*be, random_floats(static_cast<size_t>(N) * F, 3));
          auto y = upload(*be, random_floats(static_cast<size_t>(N) * F, 4, -0.5f, 1.0f));
          return Producer{dy, [&be, dy, y, p] { be->relu_dropout_backward(dy.f32(), dy.f32(), y.f32(), N * F, p); }};
        },
        [&](const tensor::Tensor& out) { return linear_of(*be, out, N, F); });
    check_copy(
        *be,
        [&] {
          auto x = upload(*be, random_floats(static_cast<size_t>(N) * D, 5));
          auto y = upload(*be, std::vector<float>(static_cast<size_t>(N) * D, 0.0f));
          return Producer{y, [&be, x, y, p] {
                            be->dropout_backward(y.f32(), x.f32(), N * D, p, backend::DropoutKey{8, 9});
                          }};
        },
        [&](const tensor::Tensor& out) { return linear_of(*be, out, N, D); });
  }
}

TEST_CASE("bf16 copies: layer norm and the fused residual layer norm write the copy the next Linear reads",
          "[backend][bf16]") {
  auto be = tt::test::bf16_backend(2);
  if (!be) return;
  auto gamma = upload(*be, random_floats(D, 10, 0.5f, 1.5f)), beta = upload(*be, random_floats(D, 11));
  auto rows = upload(*be, std::vector<float>(2 * N, 0.0f));  // mean, rstd
  const auto linear = [&](const tensor::Tensor& out) { return linear_of(*be, out, N, D); };
  check_copy(
      *be,
      [&] {
        auto x = upload(*be, random_floats(static_cast<size_t>(N) * D, 12));
        auto y = upload(*be, std::vector<float>(static_cast<size_t>(N) * D, 0.0f));
        return Producer{y, [&, x, y] {
                          be->layer_norm_forward(y.f32(), rows.f32(), rows.f32() + N, x.f32(), gamma.f32(),
                                                 beta.f32(), N, D, 1e-5f);
                        }};
      },
      linear);
  for (float p : {0.0f, 0.2f}) {
    INFO("p = " << p);
    auto bias = upload(*be, random_floats(D, 13));
    auto sum = upload(*be, std::vector<float>(static_cast<size_t>(N) * D, 0.0f));
    auto residual = upload(*be, random_floats(static_cast<size_t>(N) * D, 14));
    check_copy(
        *be,
        [&] {
          auto x = upload(*be, random_floats(static_cast<size_t>(N) * D, 15));
          auto y = upload(*be, std::vector<float>(static_cast<size_t>(N) * D, 0.0f));
          return Producer{y, [&, x, y, p] {
                            be->residual_layer_norm_forward(y.f32(), sum.f32(), rows.f32(), rows.f32() + N, nullptr,
                                                            x.f32(), bias.f32(), residual.f32(), gamma.f32(),
                                                            beta.f32(), N, D, 1e-5f, p, backend::DropoutKey{1, 2});
                          }};
        },
        linear);
    // Backward: its dx (the sub-layer output's gradient) feeds both products of the sub-layer's last Linear.
    auto dgrads = upload(*be, std::vector<float>(3 * D, 0.0f));
    check_copy(
        *be,
        [&] {
          auto dy = upload(*be, random_floats(static_cast<size_t>(N) * D, 16));
          auto dres = upload(*be, std::vector<float>(static_cast<size_t>(N) * D, 0.0f));
          auto dx = upload(*be, std::vector<float>(static_cast<size_t>(N) * D, 0.0f));
          return Producer{dx, [&, dy, dres, dx, p] {
                            be->residual_layer_norm_backward(dres.f32(), dx.f32(), dgrads.f32(), dgrads.f32() + D,
                                                             dgrads.f32() + 2 * D, dy.f32(), sum.f32(), rows.f32(),
                                                             rows.f32() + N, nullptr, gamma.f32(), N, D, p,
                                                             backend::DropoutKey{1, 2});
                          }};
        },
        linear);
  }
}

TEST_CASE("bf16 copies: attention's softmax, dropout and softmax backward write the copy of the weights the "
          "batched products read",
          "[backend][bf16]") {
  auto be = tt::test::bf16_backend(2);
  if (!be) return;
  const int B = 2, H = 3, Tq = 5, Tk = 7, Dh = 8;
  const int64_t n = int64_t{B} * H * Tq * Tk;
  auto lengths = upload(*be, std::vector<int32_t>{7, 4});
  // ctx = w v over the [B, H, Tq, Tk] weights, v rows (b, t) of H heads: attention's layout
  // (ops/attention_composed.cpp).
  const auto weighted = [&](const tensor::Tensor& w) {
    auto v = upload(*be, random_floats(static_cast<size_t>(B) * Tk * H * Dh, 20));
    auto ctx = upload(*be, std::vector<float>(static_cast<size_t>(B) * Tq * H * Dh, 0.0f));
    be->gemm_batched(false, false, B, H, Tq, Dh, Tk, 1.0f, w.f32(), backend::MatrixStrides{H * Tq * Tk, Tq * Tk, Tk},
                     v.f32(), backend::MatrixStrides{int64_t{Tk} * H * Dh, Dh, H * Dh}, 0.0f, ctx.f32(),
                     backend::MatrixStrides{int64_t{Tq} * H * Dh, Dh, H * Dh});
    return ctx.to_host_f32();
  };
  check_copy(
      *be,
      [&] {
        auto s = upload(*be, random_floats(static_cast<size_t>(n), 21, -3.0f, 3.0f));
        return Producer{s, [&, s] { be->attention_softmax_forward(s.f32(), lengths.i32(), B, H, Tq, Tk, 0.4f, true, 0); }};
      },
      weighted);
  check_copy(
      *be,
      [&] {
        auto probs = upload(*be, random_floats(static_cast<size_t>(n), 22, 0.0f, 1.0f));
        auto w = upload(*be, std::vector<float>(static_cast<size_t>(n), 0.0f));
        return Producer{w, [&, probs, w] { be->dropout_forward(w.f32(), probs.f32(), n, 0.1f, backend::DropoutKey{4, 4}); }};
      },
      weighted);
  check_copy(
      *be,
      [&] {
        auto g = upload(*be, random_floats(static_cast<size_t>(n), 23));
        auto probs = upload(*be, random_floats(static_cast<size_t>(n), 24, 0.0f, 1.0f));
        return Producer{g, [&, g, probs] { be->attention_softmax_backward(g.f32(), probs.f32(), B, H, Tq, Tk, 0.4f); }};
      },
      weighted);
}
