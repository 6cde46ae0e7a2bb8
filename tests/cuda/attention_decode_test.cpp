// CUDA attention_decode against the double reference (tests/support/reference_decode_kernels.h): padded
// row strides, keys shared and reordered through key_rows, per-row key counts, probabilities (exact zeros
// past a row's count), beam-search sizes (512 rows x 16 heads, 1024 keys, Dh up to 128), keys beyond the
// default shared-memory limit, and a row's bits independent of the other rows.
#include <catch2/catch.hpp>

#include <vector>

#include "cuda/cuda_fixture.h"
#include "support/reference_decode_kernels.h"
#include "util/error.h"

using namespace tt;
using namespace tt::test;

namespace {

struct DecodeCase {
  int rows, H, Dh, max_keys, cache_rows;
  int pad = 0;  // extra elements per row of q, k/v and ctx: strides must be honoured
  bool probs = true;
  uint32_t seed = 1;
};

struct DecodeInputs {
  std::vector<float> q, k, v;
  std::vector<int32_t> key_rows, key_counts;
  int64_t ldq, ld, ldc;
};

DecodeInputs make_inputs(const DecodeCase& c) {
  DecodeInputs in;
  const int64_t width = int64_t{c.H} * c.Dh;
  in.ldq = width + c.pad;
  in.ld = width + 2 * c.pad;
  in.ldc = width + 3 * c.pad;
  in.q = random_floats(size_t(c.rows) * in.ldq, c.seed, -2.0f, 2.0f);
  in.k = random_floats(size_t(c.cache_rows) * in.ld, c.seed + 1, -2.0f, 2.0f);
  in.v = random_floats(size_t(c.cache_rows) * in.ld, c.seed + 2);
  // Any cache row may serve any query row (beam hypotheses share prefixes); unused slots hold garbage ids
  // the kernel must not read.
  in.key_rows = random_ids(size_t(c.rows) * c.max_keys, c.seed + 3, 0, c.cache_rows);
  in.key_counts = random_ids(size_t(c.rows), c.seed + 4, 1, c.max_keys + 1);
  in.key_counts[0] = c.max_keys;
  if (c.rows > 1) in.key_counts[1] = 1;
  for (int r = 0; r < c.rows; ++r)
    for (int j = in.key_counts[r]; j < c.max_keys; ++j) in.key_rows[size_t(r) * c.max_keys + j] = 1 << 30;
  return in;
}

struct DecodeOutputs {
  std::vector<float> ctx, probs;
};

DecodeOutputs run_gpu(backend::Backend& gpu, const DecodeCase& c, const DecodeInputs& in, float scale) {
  DeviceVector<float> q(gpu, in.q), k(gpu, in.k), v(gpu, in.v);
  DeviceVector<int32_t> key_rows(gpu, in.key_rows), key_counts(gpu, in.key_counts);
  DeviceVector<float> ctx(gpu, size_t(c.rows) * in.ldc, 7.0f);  // 7: padding columns must stay untouched
  DeviceVector<float> probs(gpu, c.probs ? size_t(c.rows) * c.H * c.max_keys : 1, 7.0f);
  gpu.attention_decode(ctx.data(), in.ldc, c.probs ? probs.data() : nullptr, q.data(), in.ldq, k.data(), v.data(),
                       in.ld, key_rows.data(), key_counts.data(), c.rows, c.max_keys, c.H, c.Dh, scale);
  return {ctx.to_host(), c.probs ? probs.to_host() : std::vector<float>{}};
}

void check_decode(backend::Backend& gpu, const DecodeCase& c) {
  INFO("rows " << c.rows << " H " << c.H << " Dh " << c.Dh << " max_keys " << c.max_keys << " pad " << c.pad
               << " probs " << c.probs);
  const DecodeInputs in = make_inputs(c);
  const float scale = 1.0f / std::sqrt(float(c.Dh));
  const DecodeOutputs got = run_gpu(gpu, c, in, scale);
  std::vector<double> ctx(size_t(c.rows) * in.ldc, 7.0);
  std::vector<double> probs(c.probs ? size_t(c.rows) * c.H * c.max_keys : 0);
  reference::attention_decode(ctx.data(), in.ldc, c.probs ? probs.data() : nullptr, in.q.data(), in.ldq,
                              in.k.data(), in.v.data(), in.ld, in.key_rows.data(), in.key_counts.data(), c.rows,
                              c.max_keys, c.H, c.Dh, scale);
  check_close(got.ctx, ctx, 1e-4, 1e-5);
  if (c.probs) {
    check_close(got.probs, probs, 1e-4, 1e-6);
    size_t nonzero_past_count = 0;
    for (int r = 0; r < c.rows; ++r)
      for (int h = 0; h < c.H; ++h)
        for (int j = in.key_counts[r]; j < c.max_keys; ++j)
          nonzero_past_count += got.probs[(size_t(r) * c.H + h) * c.max_keys + j] != 0.0f;
    CHECK(nonzero_past_count == 0);
  }
}

}  // namespace

TEST_CASE("cuda attention_decode: small cases with padded strides, with and without probabilities", "[cuda]") {
  auto gpu = require_cuda();
  check_decode(*gpu, {5, 3, 8, 7, 11, 3, true, 1});
  check_decode(*gpu, {5, 3, 8, 7, 11, 3, false, 2});
  check_decode(*gpu, {1, 1, 1, 1, 1, 0, true, 3});     // one key: ctx == v
  check_decode(*gpu, {4, 2, 33, 40, 50, 1, true, 4});  // Dh not a multiple of the warp
  check_decode(*gpu, {3, 2, 256, 9, 20, 0, true, 5});  // the largest head dimension the kernel takes
}

TEST_CASE("cuda attention_decode: beam-search sizes (512 rows x 16 heads, up to 1024 keys, Dh 64 and 128)",
          "[cuda]") {
  auto gpu = require_cuda();
  check_decode(*gpu, {512, 16, 64, 96, 2048, 0, true, 11});
  check_decode(*gpu, {64, 8, 128, 1024, 4096, 0, true, 12});
  check_decode(*gpu, {32, 16, 64, 1024, 1024, 0, false, 13});
}

TEST_CASE("cuda attention_decode: keys beyond the default shared-memory limit", "[cuda]") {
  auto gpu = require_cuda();
  check_decode(*gpu, {2, 2, 16, 20000, 20000, 0, true, 21});  // 80 KB of scores per block: opted in
}

TEST_CASE("cuda attention_decode: a row's bits do not depend on the other rows", "[cuda]") {
  auto gpu = require_cuda();
  const DecodeCase all{64, 4, 32, 50, 300, 0, true, 31};
  const DecodeInputs in = make_inputs(all);
  const float scale = 0.125f;
  const DecodeOutputs full = run_gpu(*gpu, all, in, scale);
  for (int r : {0, 1, 37, 63}) {
    INFO("row " << r);
    DecodeCase one = all;
    one.rows = 1;
    DecodeInputs single = in;
    single.q.assign(in.q.begin() + r * in.ldq, in.q.begin() + (r + 1) * in.ldq);
    single.key_rows.assign(in.key_rows.begin() + r * all.max_keys, in.key_rows.begin() + (r + 1) * all.max_keys);
    single.key_counts = {in.key_counts[r]};
    const DecodeOutputs alone = run_gpu(*gpu, one, single, scale);
    check_equal(alone.ctx, std::vector<float>(full.ctx.begin() + r * in.ldc, full.ctx.begin() + (r + 1) * in.ldc));
    const size_t p = size_t(all.H) * all.max_keys;
    check_equal(alone.probs, std::vector<float>(full.probs.begin() + r * p, full.probs.begin() + (r + 1) * p));
  }
}

TEST_CASE("cuda attention_decode: a head dimension beyond the kernel's is refused with tt::Error", "[cuda]") {
  auto gpu = require_cuda();
  const DecodeCase c{1, 1, 257, 2, 2, 0, false, 41};
  const DecodeInputs in = make_inputs(c);
  CHECK_THROWS_AS(run_gpu(*gpu, c, in, 1.0f), Error);
}
