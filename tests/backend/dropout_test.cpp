// The CPU dropout kernels give the same bits on 1 and 2 threads (each thread draws its own range of the
// Philox stream). Their values against the reference: tests/conformance/dropout_test.cpp.
#include <catch2/catch.hpp>

#include "backend/backend.h"
#include "backend/kernel_fixture.h"
#include "util/rng.h"

using namespace tt;
using tt::test::random_floats;
using tt::test::upload;

namespace {

const backend::DropoutKey kKey{0x0123456789abcdefULL, util::rng_stream(util::RngPurpose::dropout, 7, 3)};

// The result of `kernel` on a 1-thread and on a 2-thread CPU backend.
template <typename Kernel>
void check_thread_count_independent(Kernel&& kernel) {
  std::vector<float> out[2];
  for (int threads : {1, 2}) {
    auto be = backend::make_backend("cpu", threads);
    out[threads - 1] = kernel(*be);
  }
  CHECK(out[0] == out[1]);  // bit-identical
}

}  // namespace

TEST_CASE("dropout kernels give the same bits on 1 and 2 threads", "[backend][dropout]") {
  for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{1023}, int64_t{70001}}) {
    INFO("n=" << n);
    auto X = random_floats(n, 1, 0.5f, 1.5f), R = random_floats(n, 3);
    check_thread_count_independent([&](backend::Backend& be) {
      auto x = upload(be, X);
      be.dropout_forward(x.f32(), x.f32(), n, 0.3f, kKey);
      return x.to_host_f32();
    });
    check_thread_count_independent([&](backend::Backend& be) {
      auto r = upload(be, R), x = upload(be, X);
      be.dropout_add_forward(r.f32(), r.f32(), x.f32(), n, 0.1f, kKey);
      return r.to_host_f32();
    });
  }
  for (auto [N, F] : {std::pair<int64_t, int>{3, 5}, {37, 1031}, {9, 2100}}) {
    INFO("N=" << N << " F=" << F);
    auto X = random_floats(N * F, 5), bias = random_floats(F, 6);
    check_thread_count_independent([&](backend::Backend& be) {
      auto x = upload(be, X), b = upload(be, bias);
      be.bias_relu_dropout_forward(x.f32(), x.f32(), b.f32(), N, F, 0.2f, kKey);
      return x.to_host_f32();
    });
  }
}
