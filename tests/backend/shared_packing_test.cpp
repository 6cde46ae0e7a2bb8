// Decoding workers share one packed copy of the weights (Backend::share_packed_weights, packed_gemm.h): a
// worker's products read the copy the first one packed and the stored weights it adopted, give the bits
// of an unshared backend, and stay right when the workers run products at the same time.
#include <catch2/catch.hpp>

#include <cmath>
#include <thread>

#include "backend/backend.h"
#include "backend/kernel_fixture.h"
#include "backend/packed_products.h"
#include "backend/quantized_weight.h"

using namespace tt;
using backend::MatmulPrecision;
using backend::QuantizedWeight;
using backend::StoredWeight;
using tt::test::product;
using tt::test::random_floats;
using tt::test::same_bits;
using tt::test::upload;

namespace {

// One thread each, as tt-translate gives each of two workers on two threads.
std::unique_ptr<backend::Backend> worker(MatmulPrecision p = MatmulPrecision::fp32) {
  return tt::test::decoding_backend(p, 1);
}

}  // namespace

TEST_CASE("a worker sharing the first one's packed weights reads that copy, not a copy of its own",
          "[backend][packed]") {
  for (MatmulPrecision p : {MatmulPrecision::fp32, MatmulPrecision::int8, MatmulPrecision::bf16}) {
    auto first = worker(p), second = worker(p), alone = worker(p);
    if (!first) continue;  // bf16 needs AVX512-BF16 or AMX
    INFO("precision " << static_cast<int>(p));
    REQUIRE(second->share_packed_weights(*first));
    const int M = 5, N = 300, K = 40;
    auto W = random_floats(size_t(N) * K, 1);
    const auto x = random_floats(size_t(M) * K, 2);
    auto w = upload(*first, W);  // host memory, the workers' one model (the CPU backend's pointers)
    const auto packed = product(*first, x, w, M, N, K);
    CHECK(same_bits(product(*second, x, w, M, N, K), packed));
    // Element 1 is not in the packing's 64-value fingerprint (0, 190, 380, ...): a change to it alone goes
    // unseen by a copy already packed — the shared one — and is packed by a backend packing afresh.
    W[1] += 1.0f;
    first->copy_from_host(w.f32(), W.data(), W.size() * sizeof(float));
    CHECK(same_bits(product(*second, x, w, M, N, K), packed));
    CHECK_FALSE(same_bits(product(*alone, x, w, M, N, K), packed));
  }
}

TEST_CASE("a worker sharing packed weights reads the stored weights the first one adopted", "[backend][packed]") {
  auto first = worker(), second = worker(), alone = worker();
  REQUIRE(second->share_packed_weights(*first));
  const int M = 9, N = 70, K = 24;
  const auto W = random_floats(size_t(N) * K, 3);
  const auto x = random_floats(size_t(M) * K, 4);
  QuantizedWeight stored;
  stored.type = MatmulPrecision::fp32;
  stored.N = N;
  stored.K = K;
  stored.f32 = W;
  // The slot holds NaNs: a product that read it instead of the stored values would give NaN.
  auto slot = upload(*first, std::vector<float>(W.size(), std::nanf("")));
  REQUIRE(first->adopt_stored_weight(slot.f32(), StoredWeight::of(stored)));
  const auto expected = product(*alone, x, upload(*alone, W), M, N, K);
  CHECK(same_bits(product(*second, x, slot, M, N, K), expected));
  CHECK(same_bits(product(*first, x, slot, M, N, K), expected));
  CHECK(std::isnan(slot.to_host_f32()[0]));  // never written
}

TEST_CASE("workers sharing packed weights run products at the same time with the bits of one alone",
          "[backend][packed]") {
  auto first = worker(), second = worker(), alone = worker();
  REQUIRE(second->share_packed_weights(*first));
  const int N = 600, K = 64, rounds = 40;
  auto w = upload(*alone, random_floats(size_t(N) * K, 5));  // packed by whichever worker comes first
  std::vector<std::vector<float>> inputs, expected;
  for (int r = 0; r < rounds; ++r) {
    const int M = 1 + r % 17;  // beams of every height: main tiles and tails
    inputs.push_back(random_floats(size_t(M) * K, 100 + uint32_t(r)));
    expected.push_back(product(*alone, inputs.back(), w, M, N, K));
  }
  std::vector<std::vector<float>> got[2];
  auto worker = [&](backend::Backend& be, std::vector<std::vector<float>>& out) {
    for (int r = 0; r < rounds; ++r) out.push_back(product(be, inputs[size_t(r)], w, 1 + r % 17, N, K));
  };
  std::thread a(worker, std::ref(*first), std::ref(got[0])), b(worker, std::ref(*second), std::ref(got[1]));
  a.join();
  b.join();
  for (int r = 0; r < rounds; ++r) {
    INFO("round " << r);
    CHECK(same_bits(got[0][size_t(r)], expected[size_t(r)]));
    CHECK(same_bits(got[1][size_t(r)], expected[size_t(r)]));
  }
}

TEST_CASE("sharing packed weights is refused with itself and outside row-invariant mode", "[backend][packed]") {
  auto first = worker();
  CHECK_FALSE(first->share_packed_weights(*first));
  auto training = backend::make_backend("cpu", 1);  // not row-invariant: packs nothing
  CHECK_FALSE(training->share_packed_weights(*first));
  CHECK_FALSE(first->share_packed_weights(*training));
}
