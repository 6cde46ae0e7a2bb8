// bf16 storage (Backend::bf16_storage): the FFN hidden layer a bf16 training step saves only rounded. Each
// call must give the bits of its fp32 counterpart followed by rounding — the bits the layer would get by
// keeping the fp32 values and converting them — so that saving in bf16 changes memory, never results.
#include <bit>
#include <cmath>
#include <catch2/catch.hpp>

#include "backend/backend.h"
#include "backend/bf16_storage.h"
#include "backend/bf16_fixture.h"
#include "backend/kernel_fixture.h"
#include "support/bf16.h"
#include "util/error.h"

using namespace tt;
using tt::test::random_floats;
using tt::test::upload;

namespace {

std::vector<uint16_t> bf16_bits(const std::vector<float>& v) {
  std::vector<uint16_t> bits(v.size());
  for (size_t i = 0; i < v.size(); ++i) bits[i] = static_cast<uint16_t>(std::bit_cast<uint32_t>(tt::test::round_bf16(v[i])) >> 16);
  return bits;
}

tensor::Tensor upload_bf16(backend::Backend& be, const std::vector<uint16_t>& bits, tensor::Shape shape) {
  auto t = tensor::Tensor::empty(be, shape, tensor::DType::bf16);
  be.copy_from_host(t.bf16(), bits.data(), t.bytes());
  return t;
}

// A training step's held weights for as long as it lives: bf16 storage is on only then.
class HeldStep {
 public:
  explicit HeldStep(backend::Backend& be) : be_(be), weights_(upload(be, std::vector<float>(4, 0.0f))) {
    be_.hold_bf16_weights(weights_.f32(), weights_.numel());
  }
  ~HeldStep() { be_.release_bf16_weights(); }
  HeldStep(const HeldStep&) = delete;
  HeldStep& operator=(const HeldStep&) = delete;

 private:
  backend::Backend& be_;
  tensor::Tensor weights_;
};

// The backend's bf16 storage: a tt::InternalError outside a training step, as a layer would get.
backend::Bf16Storage& storage(backend::Backend& be) { return backend::bf16_storage_of(be, "test"); }

// F spans two mask pieces (1024) and is no multiple of the vector width.
constexpr int N = 7, F = 1500, O = 5;

}  // namespace

TEST_CASE("bf16 storage: on only inside a bf16 training step", "[backend][bf16]") {
  auto fp32 = backend::make_backend("cpu", 2);
  {
    HeldStep step(*fp32);  // holding has no effect in fp32 precision
    CHECK(fp32->bf16_storage() == nullptr);
  }
  auto be = tt::test::bf16_backend(2);
  if (!be) return;
  CHECK(be->bf16_storage() == nullptr);
  {
    HeldStep step(*be);
    CHECK(be->bf16_storage() != nullptr);
  }
  CHECK(be->bf16_storage() == nullptr);
  // A stored operand outside a step is a caller bug, refused rather than read as fp32.
  auto a = upload_bf16(*be, std::vector<uint16_t>(4, 0x3f80), {2, 2});
  auto c = upload(*be, std::vector<float>(4, 0.0f));
  CHECK_THROWS_AS(storage(*be).gemm_bf16_operand(false, true, 2, 2, 2, 1.0f, a.bf16(), 2, true, c.f32(), 2, false, 0.0f,
                                        c.f32(), 2),
                  InternalError);
}

TEST_CASE("bf16 storage: round_to_bf16 rounds to nearest even, as the products round their operands",
          "[backend][bf16]") {
  auto be = tt::test::bf16_backend(2);
  if (!be) return;
  // Ties both ways (1 + 2^-8 rounds down to even, 1 + 3 * 2^-8 up), a value just above a tie, a negative,
  // zero and random values.
  std::vector<float> x = {1.00390625f, 1.01171875f, std::nextafter(1.00390625f, 2.0f), -2.5f, 0.0f};
  const auto more = random_floats(1000, 13, -100.0f, 100.0f);
  x.insert(x.end(), more.begin(), more.end());
  auto xs = upload(*be, x);
  const int64_t n = xs.numel();
  auto y16 = tensor::Tensor::empty(*be, {n}, tensor::DType::bf16);
  auto round = [&] { storage(*be).round_to_bf16(y16.bf16(), xs.f32(), nullptr, 1, 1, 1, n, backend::MatrixStrides{n, n, n}); };
  CHECK_THROWS_AS(round(), InternalError);  // no step
  HeldStep step(*be);
  round();
  const auto bits = y16.to_host_bf16();
  CHECK(bits == bf16_bits(x));
  CHECK(bits[0] == 0x3f80);
  CHECK(bits[1] == 0x3f82);
  CHECK(bits[2] == 0x3f81);
}

TEST_CASE("bf16 storage: round_to_bf16 packs [B, T, H, Dh] projections into dense [B, H, T, Dh], a bias added first",
          "[backend][bf16]") {
  auto be = tt::test::bf16_backend(2);
  if (!be) return;
  HeldStep step(*be);
  // Member 1 (k) of a q|k|v row layout: rows of 3 H Dh, head h at column D + h Dh.
  const int B = 2, T = 3, H = 2, Dh = 4, D = H * Dh, ld = 3 * D;
  const auto x = random_floats(static_cast<size_t>(B) * T * ld, 14);
  auto xs = upload(*be, x);
  auto y16 = tensor::Tensor::empty(*be, {B, H, T, Dh}, tensor::DType::bf16);
  const backend::MatrixStrides s{int64_t{T} * ld, Dh, ld};
  storage(*be).round_to_bf16(y16.bf16(), xs.f32() + D, nullptr, B, H, T, Dh, s);
  // With the projection's bias: the rounding of the fp32 sum, bias element h * Dh + j in head h's column j.
  const auto bias = random_floats(static_cast<size_t>(D), 15);
  auto biased16 = tensor::Tensor::empty(*be, {B, H, T, Dh}, tensor::DType::bf16);
  storage(*be).round_to_bf16(biased16.bf16(), xs.f32() + D, upload(*be, bias).f32(), B, H, T, Dh, s);
  std::vector<float> packed, biased;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int t = 0; t < T; ++t)
        for (int j = 0; j < Dh; ++j) {
          packed.push_back(x[static_cast<size_t>((b * T + t) * ld + D + h * Dh + j)]);
          biased.push_back(packed.back() + bias[static_cast<size_t>(h * Dh + j)]);
        }
  CHECK(y16.to_host_bf16() == bf16_bits(packed));
  CHECK(biased16.to_host_bf16() == bf16_bits(biased));
}

TEST_CASE("bf16 storage: bias + ReLU + dropout writes the rounding of its fp32 result and leaves x", "[backend][bf16]") {
  auto be = tt::test::bf16_backend(2);
  if (!be) return;
  HeldStep step(*be);
  const auto x_host = random_floats(static_cast<size_t>(N) * F, 1), bias_host = random_floats(F, 2);
  auto x = upload(*be, x_host), bias = upload(*be, bias_host);
  for (float p : {0.0f, 0.3f}) {
    INFO("p = " << p);
    const backend::DropoutKey key{5, 6};
    auto y = upload(*be, std::vector<float>(x_host.size(), 0.0f));
    be->bias_relu_dropout_forward(y.f32(), x.f32(), bias.f32(), N, F, p, key);
    auto y16 = tensor::Tensor::empty(*be, {N, F}, tensor::DType::bf16);
    storage(*be).bias_relu_dropout_forward_bf16(y16.bf16(), x.f32(), bias.f32(), N, F, p, key);
    CHECK(y16.to_host_bf16() == bf16_bits(y.to_host_f32()));
    CHECK(x.to_host_f32() == x_host);
  }
}

TEST_CASE("bf16 storage: dropout writes the rounding of its fp32 result", "[backend][bf16]") {
  auto be = tt::test::bf16_backend(2);
  if (!be) return;
  HeldStep step(*be);
  const auto x_host = random_floats(2500, 15);  // three mask pieces, the last one partial
  auto x = upload(*be, x_host);
  for (float p : {0.0f, 0.3f}) {
    INFO("p = " << p);
    auto y = upload(*be, std::vector<float>(x_host.size(), 0.0f));
    be->dropout_forward(y.f32(), x.f32(), x.numel(), p, backend::DropoutKey{3, 4});
    auto y16 = tensor::Tensor::empty(*be, {x.numel()}, tensor::DType::bf16);
    storage(*be).dropout_forward_bf16(y16.bf16(), x.f32(), x.numel(), p, backend::DropoutKey{3, 4});
    CHECK(y16.to_host_bf16() == bf16_bits(y.to_host_f32()));
    CHECK(x.to_host_f32() == x_host);
  }
}

TEST_CASE("bf16 storage: relu_dropout_backward takes its mask from the bf16 output, and the bias gradient on the way",
          "[backend][bf16]") {
  auto be = tt::test::bf16_backend(2);
  if (!be) return;
  HeldStep step(*be);
  auto x = upload(*be, random_floats(static_cast<size_t>(N) * F, 3)), bias = upload(*be, random_floats(F, 4));
  const auto dy_host = random_floats(static_cast<size_t>(N) * F, 5);
  auto dy = upload(*be, dy_host);
  for (float p : {0.0f, 0.3f}) {
    INFO("p = " << p);
    auto y = upload(*be, std::vector<float>(dy_host.size(), 0.0f));  // zeros from the ReLU and from dropout
    be->bias_relu_dropout_forward(y.f32(), x.f32(), bias.f32(), N, F, p, backend::DropoutKey{7, 8});
    auto y16 = upload_bf16(*be, bf16_bits(y.to_host_f32()), {N, F});
    auto expected = upload(*be, dy_host), actual = upload(*be, dy_host);
    be->relu_dropout_backward(expected.f32(), dy.f32(), y.f32(), y.numel(), p);
    storage(*be).relu_dropout_backward_bf16(actual.f32(), nullptr, dy.f32(), y16.bf16(), N, F, p);
    CHECK(actual.to_host_f32() == expected.to_host_f32());
    // With the bias gradient: the bits bias_backward takes from dx, added to what dbias held.
    const auto db0 = random_floats(F, 6);
    auto db_expected = upload(*be, db0), db_actual = upload(*be, db0);
    be->bias_backward(db_expected.f32(), expected.f32(), N, F);
    storage(*be).relu_dropout_backward_bf16(actual.f32(), db_actual.f32(), dy.f32(), y16.bf16(), N, F, p);
    CHECK(actual.to_host_f32() == expected.to_host_f32());
    CHECK(db_actual.to_host_f32() == db_expected.to_host_f32());
  }
  // Several blocks of rows and a column count that is no multiple of a vector.
  const int64_t n2 = 70;
  const int f2 = 33;
  auto y2 = upload(*be, std::vector<float>(n2 * f2, 0.0f));
  be->bias_relu_dropout_forward(y2.f32(), upload(*be, random_floats(n2 * f2, 7)).f32(),
                                upload(*be, random_floats(f2, 8)).f32(), n2, f2, 0.2f, backend::DropoutKey{3, 4});
  auto y2_16 = upload_bf16(*be, bf16_bits(y2.to_host_f32()), {n2, f2});
  const auto g2 = random_floats(n2 * f2, 9);
  auto dx_expected = upload(*be, g2), dx_actual = upload(*be, g2), dy2 = upload(*be, g2);
  auto db_expected = upload(*be, std::vector<float>(f2, 0.5f)), db_actual = upload(*be, std::vector<float>(f2, 0.5f));
  be->relu_dropout_backward(dx_expected.f32(), dy2.f32(), y2.f32(), n2 * f2, 0.2f);
  be->bias_backward(db_expected.f32(), dx_expected.f32(), n2, f2);
  storage(*be).relu_dropout_backward_bf16(dx_actual.f32(), db_actual.f32(), dy2.f32(), y2_16.bf16(), n2, f2, 0.2f);
  CHECK(dx_actual.to_host_f32() == dx_expected.to_host_f32());
  CHECK(db_actual.to_host_f32() == db_expected.to_host_f32());
}

TEST_CASE("bf16 storage: the residual layer norm backward stores dx only rounded, the rest as its fp32 call",
          "[backend][bf16]") {
  auto be = tt::test::bf16_backend(2);
  if (!be) return;
  HeldStep step(*be);
  const int64_t n = 70;  // several blocks of rows
  const int d = 33;      // no multiple of a vector
  const auto nd = static_cast<size_t>(n * d);
  auto x = upload(*be, random_floats(nd, 20)), residual = upload(*be, random_floats(nd, 21));
  auto bias = upload(*be, random_floats(d, 22)), gamma = upload(*be, random_floats(d, 23, 0.5f, 1.5f));
  auto beta = upload(*be, random_floats(d, 24));
  const auto dy_host = random_floats(nd, 25), params_host = random_floats(3 * static_cast<size_t>(d), 26);
  for (float p : {0.0f, 0.2f}) {
    INFO("p = " << p);
    const backend::DropoutKey key{11, 12};
    auto y = upload(*be, std::vector<float>(nd, 0.0f)), sum = upload(*be, std::vector<float>(nd, 0.0f));
    auto rows = upload(*be, std::vector<float>(2 * n, 0.0f));  // mean, rstd
    auto mask = tensor::Tensor::empty(*be, {n * d}, tensor::DType::u8);
    be->residual_layer_norm_forward(y.f32(), sum.f32(), rows.f32(), rows.f32() + n, mask.u8(), x.f32(), bias.f32(),
                                    residual.f32(), gamma.f32(), beta.f32(), n, d, 1e-5f, p, key);
    // Parameter gradients accumulate onto what they held.
    auto dy = upload(*be, dy_host), dres_expected = upload(*be, dy_host), dres_actual = upload(*be, dy_host);
    auto dx = upload(*be, std::vector<float>(nd, 0.0f));
    auto dx16 = upload_bf16(*be, std::vector<uint16_t>(nd, 0x7fc0), {n, d});  // NaNs: every element rewritten
    auto params_expected = upload(*be, params_host), params_actual = upload(*be, params_host);
    float *pe = params_expected.f32(), *pa = params_actual.f32();
    be->residual_layer_norm_backward(dres_expected.f32(), dx.f32(), pe, pe + d, pe + 2 * d, dy.f32(), sum.f32(),
                                     rows.f32(), rows.f32() + n, mask.u8(), gamma.f32(), n, d, p, key);
    storage(*be).residual_layer_norm_backward_bf16(dres_actual.f32(), dx16.bf16(), pa, pa + d, pa + 2 * d, dy.f32(),
                                                   sum.f32(), rows.f32(), rows.f32() + n, mask.u8(), gamma.f32(), n,
                                                   d, p, key);
    CHECK(dx16.to_host_bf16() == bf16_bits(dx.to_host_f32()));
    CHECK(dres_actual.to_host_f32() == dres_expected.to_host_f32());
    CHECK(params_actual.to_host_f32() == params_expected.to_host_f32());
  }
}

TEST_CASE("bf16 storage: a product with a bf16 operand gives the bits of one rounding the fp32 operand",
          "[backend][bf16]") {
  auto be = tt::test::bf16_backend(2);
  if (!be) return;
  HeldStep step(*be);
  const auto h_host = random_floats(static_cast<size_t>(N) * F, 9);
  auto h = upload(*be, h_host), h16 = upload_bf16(*be, bf16_bits(h_host), {N, F});
  auto w = upload(*be, random_floats(static_cast<size_t>(O) * F, 10));
  SECTION("A stored: y = h W^T (fc2 forward)") {
    auto expected = upload(*be, std::vector<float>(N * O, 0.0f)), actual = upload(*be, std::vector<float>(N * O, 0.0f));
    be->gemm(false, true, N, O, F, 1.0f, h.f32(), F, w.f32(), F, 0.0f, expected.f32(), O);
    storage(*be).gemm_bf16_operand(false, true, N, O, F, 1.0f, h16.bf16(), F, true, w.f32(), F, false, 0.0f,
                                   actual.f32(), O);
    CHECK(actual.to_host_f32() == expected.to_host_f32());
  }
  SECTION("B stored: dW += dy^T h (fc2's weight gradient)") {
    const auto dw_host = random_floats(static_cast<size_t>(O) * F, 11);
    auto dy = upload(*be, random_floats(static_cast<size_t>(N) * O, 12));
    auto expected = upload(*be, dw_host), actual = upload(*be, dw_host);
    be->gemm(true, false, O, F, N, 1.0f, dy.f32(), O, h.f32(), F, 1.0f, expected.f32(), F);
    storage(*be).gemm_bf16_operand(true, false, O, F, N, 1.0f, dy.f32(), O, false, h16.bf16(), F, true, 1.0f,
                                   actual.f32(), F);
    CHECK(actual.to_host_f32() == expected.to_host_f32());
  }
  SECTION("a stored operand must be dense") {
    auto c = upload(*be, std::vector<float>(N * O, 0.0f));
    CHECK_THROWS_AS(storage(*be).gemm_bf16_operand(false, true, N - 1, O, F - 1, 1.0f, h16.bf16(), F, true, w.f32(),
                                                   F, false, 0.0f, c.f32(), O),
                    InternalError);
  }
}
