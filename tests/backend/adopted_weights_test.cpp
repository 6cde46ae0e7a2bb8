// Weights as a model file stores them (float32, or quantized by tt-convert quantize), adopted by the backend
// (backend/quantized_weight.h, packed_gemm.h): products against them give the bits the same fp32 weights
// give at that compute type, without ever reading the weights' fp32 slot — also when several adopted
// weights lying one after the other are read as one product (q, k, v) — and a product of another kind
// restores the slot first.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "backend/backend.h"
#include "backend/cpu/packed_gemm.h"
#include "backend/kernel_fixture.h"
#include "backend/packed_products.h"
#include "backend/quantized_weight.h"

using namespace tt;
using backend::MatmulPrecision;
using backend::QuantizedWeight;
using backend::StoredWeight;
using tt::test::decoding_backend;
using tt::test::product;
using tt::test::random_floats;
using tt::test::same_bits;
using tt::test::upload;

namespace {

bool vnni_levels() { return backend::cpu::PackedGemm::int8_weight_levels() == QuantizedWeight::kInt8Levels; }

}  // namespace

TEST_CASE("quantized weights: the worked int8 and bf16 roundings", "[backend][quantized]") {
  const std::vector<float> w = {0.5f, -1.0f, 0.25f, 0.0f, 0.0f, 0.0f};
  const auto q = QuantizedWeight::quantize(MatmulPrecision::int8, w.data(), 2, 3, 3);
  // Row 0: max |w| = 1, scale 1/127; 0.5 * 127 = 63.5 rounds to the even 64; 0.25 * 127 = 31.75 -> 32.
  CHECK(q.s8 == std::vector<int8_t>{64, -127, 32, 0, 0, 0});
  CHECK(q.scales == std::vector<float>{1.0f / 127.0f, 0.0f});  // an all-zero row: scale 0, values 0
  std::vector<float> back(6);
  q.dequantize(back.data(), 3);
  CHECK(back[0] == 64.0f * (1.0f / 127.0f));
  CHECK(back[3] == 0.0f);
  // bf16: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: to the even one, 1; 1 + 3 * 2^-8 -> 1 + 2^-6.
  const std::vector<float> v = {1.00390625f, 1.01171875f, -2.0f, std::numeric_limits<float>::quiet_NaN()};
  const auto h = QuantizedWeight::quantize(MatmulPrecision::bf16, v.data(), 1, 4, 4);
  CHECK(h.bf16[0] == 0x3f80);
  CHECK(h.bf16[1] == 0x3f82);
  CHECK(h.bf16[2] == 0xc000);
  CHECK((h.bf16[3] & 0x7fc0) == 0x7fc0);  // a quiet NaN stays NaN
}

TEST_CASE("adopted int8 and bf16 weights give the fp32 weights' bits at that compute type, slot unread",
          "[backend][quantized]") {
  for (MatmulPrecision p : {MatmulPrecision::int8, MatmulPrecision::bf16}) {
    auto be = decoding_backend(p);
    if (!be) continue;  // bf16 needs AVX512-BF16 or AMX
    auto adopter = decoding_backend(p);
    INFO((p == MatmulPrecision::int8 ? "int8" : "bf16"));
    for (auto [M, N, K] : {std::tuple{5, 300, 64}, std::tuple{37, 64, 96}}) {
      const auto w = random_floats(size_t(N) * K, 3);
      const auto x = random_floats(size_t(M) * K, 4);
      const auto expected = product(*be, x, upload(*be, w), M, N, K);
      // The adopter's slot holds NaNs: a product that read it would give NaN.
      auto slot = upload(*adopter, std::vector<float>(w.size(), std::nanf("")));
      auto q = StoredWeight::of(QuantizedWeight::quantize(p, w.data(), N, K, K));
      if (p == MatmulPrecision::int8 && !vnni_levels()) {
        CHECK_FALSE(adopter->adopt_stored_weight(slot.f32(), q));  // fewer levels here: dequantize instead
        continue;
      }
      REQUIRE(adopter->adopt_stored_weight(slot.f32(), q));
      CHECK(same_bits(product(*adopter, x, slot, M, N, K), expected));
      CHECK(std::isnan(slot.to_host_f32()[0]));  // never written either
    }
  }
}

TEST_CASE("adopted weights lying one after the other are read as one product, as a fused q, k, v", "[backend][quantized]") {
  auto be = decoding_backend(MatmulPrecision::int8);
  auto adopter = decoding_backend(MatmulPrecision::int8);
  if (!vnni_levels()) return;
  const int K = 48, rows[3] = {40, 40, 300}, N = 380, M = 9;
  const auto w = random_floats(size_t(N) * K, 5);
  const auto x = random_floats(size_t(M) * K, 6);
  const auto expected = product(*be, x, upload(*be, w), M, N, K);
  auto slot = upload(*adopter, std::vector<float>(w.size(), std::nanf("")));
  int first = 0;
  for (int n : rows) {
    const float* part = w.data() + size_t(first) * K;
    REQUIRE(adopter->adopt_stored_weight(slot.f32() + size_t(first) * K,
                                         StoredWeight::of(QuantizedWeight::quantize(MatmulPrecision::int8, part, n, K, K))));
    first += n;
  }
  CHECK(same_bits(product(*adopter, x, slot, M, N, K), expected));
}

TEST_CASE("a product of another precision restores an adopted weight's slot and reads the dequantized values",
          "[backend][quantized]") {
  auto adopter = decoding_backend(MatmulPrecision::int8);
  if (!vnni_levels()) return;
  const int M = 4, N = 20, K = 16;
  const auto w = random_floats(size_t(N) * K, 7);
  const auto x = random_floats(size_t(M) * K, 8);
  const auto values = QuantizedWeight::quantize(MatmulPrecision::int8, w.data(), N, K, K);
  const auto q = StoredWeight::of(values);
  auto slot = upload(*adopter, std::vector<float>(w.size(), std::nanf("")));
  REQUIRE(adopter->adopt_stored_weight(slot.f32(), q));
  REQUIRE(adopter->set_matmul_precision(MatmulPrecision::fp32));
  std::vector<float> dequantized(w.size());
  values.dequantize(dequantized.data(), K);
  auto fp32 = decoding_backend(MatmulPrecision::fp32);
  CHECK(same_bits(product(*adopter, x, slot, M, N, K), product(*fp32, x, upload(*fp32, dequantized), M, N, K)));
  CHECK(same_bits(slot.to_host_f32(), dequantized));
  // Outside row-invariant mode or at another precision nothing is adopted: the caller dequantizes.
  CHECK_FALSE(adopter->adopt_stored_weight(slot.f32(), q));
}

TEST_CASE("adopted float32 weights: read only when packed, the fp32 product's bits, restored when row invariance ends",
          "[backend][quantized]") {
  auto be = decoding_backend(MatmulPrecision::fp32);
  auto adopter = decoding_backend(MatmulPrecision::fp32);
  const int M = 19, N = 300, K = 40;
  const auto w = random_floats(size_t(N) * K, 9);
  const auto x = random_floats(size_t(M) * K, 10);
  const auto expected = product(*be, x, upload(*be, w), M, N, K);
  QuantizedWeight values;
  values.type = MatmulPrecision::fp32;
  values.N = N;
  values.K = K;
  values.f32 = w;
  auto stored = std::make_shared<StoredWeight>(*StoredWeight::of(values));
  int reads = 0;
  stored->read = [&reads, values] {
    ++reads;
    return values;
  };
  auto slot = upload(*adopter, std::vector<float>(w.size(), std::nanf("")));
  REQUIRE(adopter->adopt_stored_weight(slot.f32(), stored));
  CHECK(reads == 0);  // nothing read before a product needs it
  CHECK(same_bits(product(*adopter, x, slot, M, N, K), expected));
  CHECK(same_bits(product(*adopter, x, slot, M, N, K), expected));
  CHECK(reads == 1);  // packed once
  CHECK(std::isnan(slot.to_host_f32()[0]));
  REQUIRE(adopter->set_row_invariant(false));  // other products read the slot: it is written back
  CHECK(same_bits(slot.to_host_f32(), w));

  // Stored float32, products at int8 or bf16: quantized or rounded when packed, as the fp32 slot would be.
  for (MatmulPrecision p : {MatmulPrecision::int8, MatmulPrecision::bf16}) {
    auto reference = decoding_backend(p);
    auto quantizing = decoding_backend(p);
    if (!reference) continue;
    auto nan_slot = upload(*quantizing, std::vector<float>(w.size(), std::nanf("")));
    REQUIRE(quantizing->adopt_stored_weight(nan_slot.f32(), StoredWeight::of(values)));
    CHECK(same_bits(product(*quantizing, x, nan_slot, M, N, K), product(*reference, x, upload(*reference, w), M, N, K)));
  }
}
