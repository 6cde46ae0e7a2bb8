// Dropout kernels. Element i (flat index into the tensor) is kept iff philox_uniform(seed, stream, i) >= p
// (util/rng.h), kept values scaled by 1/(1-p): the same mask on any thread count and on CUDA.
//   dropout_forward / dropout_backward / dropout_add_forward: flat [n]
//   bias_relu_dropout_forward: y, x [N, F], bias [F]      relu_dropout_backward: flat [n]
#include <algorithm>

#include "backend/cpu/cpu_backend.h"
#include "util/rng.h"

namespace tt::backend::cpu {
namespace {

constexpr int kChunk = 1024;  // elements per mask piece (a stack buffer of uniforms)
constexpr int kLanes = 16;    // Philox blocks computed side by side (one AVX-512 register per word)

// u[k] = philox_uniform(key.seed, key.stream, i0 + k) for k < count (count <= kChunk); `buf` holds
// kChunk + 8 floats. Returns u. The Philox rounds run over kLanes counters at once so that the
// 32x32->64 multiplies vectorise; the result is bit-identical to util::philox4x32.
const float* dropout_uniforms(float* buf, int64_t i0, int count, DropoutKey key) {
  uint64_t first_block = static_cast<uint64_t>(i0) >> 2;
  int nblocks = static_cast<int>(((static_cast<uint64_t>(i0) + count + 3) >> 2) - first_block);
  const uint32_t s_lo = static_cast<uint32_t>(key.stream), s_hi = static_cast<uint32_t>(key.stream >> 32);
  for (int b0 = 0; b0 < nblocks; b0 += kLanes) {
    uint32_t c0[kLanes], c1[kLanes], c2[kLanes], c3[kLanes];
    for (int l = 0; l < kLanes; ++l) {
      uint64_t blk = first_block + static_cast<uint64_t>(b0 + l);
      c0[l] = static_cast<uint32_t>(blk);
      c1[l] = static_cast<uint32_t>(blk >> 32);
      c2[l] = s_lo;
      c3[l] = s_hi;
    }
    uint32_t k0 = static_cast<uint32_t>(key.seed), k1 = static_cast<uint32_t>(key.seed >> 32);
    for (int round = 0; round < 10; ++round) {
#pragma omp simd
      for (int l = 0; l < kLanes; ++l) {
        uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0[l];
        uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2[l];
        uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1[l] ^ k0;
        uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3[l] ^ k1;
        c0[l] = n0;
        c1[l] = static_cast<uint32_t>(p1);
        c2[l] = n2;
        c3[l] = static_cast<uint32_t>(p0);
      }
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    int lanes = std::min(kLanes, nblocks - b0);
    for (int l = 0; l < lanes; ++l) {
      float* o = buf + 4 * (b0 + l);
      o[0] = util::uniform01(c0[l]);
      o[1] = util::uniform01(c1[l]);
      o[2] = util::uniform01(c2[l]);
      o[3] = util::uniform01(c3[l]);
    }
  }
  return buf + (i0 & 3);
}

float keep_scale(float p) { return p < 1.0f ? 1.0f / (1.0f - p) : 0.0f; }

}  // namespace

void CpuBackend::dropout_forward(float* y, const float* x, int64_t n, float p, DropoutKey key) {
  if (p <= 0.0f) {
    copy(y, x, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  const float s = keep_scale(p);
  int64_t chunks = (n + kChunk - 1) / kChunk;
  int nt = threads_for(n * 8);  // Philox makes each element ~8x a plain copy
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    alignas(64) float buf[kChunk + 8];
    int64_t i0 = c * kChunk;
    int count = static_cast<int>(std::min<int64_t>(kChunk, n - i0));
    const float* u = dropout_uniforms(buf, i0, count, key);
#pragma omp simd
    for (int k = 0; k < count; ++k) y[i0 + k] = u[k] >= p ? x[i0 + k] * s : 0.0f;
  }
}

void CpuBackend::dropout_backward(float* dx, const float* dy, int64_t n, float p, DropoutKey key) {
  dropout_forward(dx, dy, n, p, key);  // the same mask and scale: d(dropout(x))/dx is dropout itself
}

void CpuBackend::dropout_add_forward(float* y, const float* residual, const float* x, int64_t n, float p,
                                     DropoutKey key) {
  if (p <= 0.0f) {
    add(y, residual, x, n);
    return;
  }
  const float s = keep_scale(p);
  int64_t chunks = (n + kChunk - 1) / kChunk;
  int nt = threads_for(n * 8);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    alignas(64) float buf[kChunk + 8];
    int64_t i0 = c * kChunk;
    int count = static_cast<int>(std::min<int64_t>(kChunk, n - i0));
    const float* u = dropout_uniforms(buf, i0, count, key);
#pragma omp simd
    for (int k = 0; k < count; ++k) y[i0 + k] = residual[i0 + k] + (u[k] >= p ? x[i0 + k] * s : 0.0f);
  }
}

void CpuBackend::bias_relu_dropout_forward(float* y, const float* x, const float* bias, int64_t N, int F, float p,
                                           DropoutKey key) {
  if (p <= 0.0f) {
    int nt = threads_for(N * F);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t i = 0; i < N; ++i) {
#pragma omp simd
      for (int j = 0; j < F; ++j) {
        float v = x[i * F + j] + bias[j];
        y[i * F + j] = v > 0.0f ? v : 0.0f;
      }
    }
    return;
  }
  const float s = keep_scale(p);
  int nt = threads_for(N * F * 8);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    alignas(64) float buf[kChunk + 8];
    for (int j0 = 0; j0 < F; j0 += kChunk) {
      int count = std::min(kChunk, F - j0);
      int64_t i0 = i * F + j0;
      const float* u = dropout_uniforms(buf, i0, count, key);
#pragma omp simd
      for (int k = 0; k < count; ++k) {
        float v = x[i0 + k] + bias[j0 + k];
        y[i0 + k] = (u[k] >= p && v > 0.0f) ? v * s : 0.0f;
      }
    }
  }
}

void CpuBackend::relu_dropout_backward(float* dx, const float* dy, const float* y, int64_t n, float p) {
  const float s = p > 0.0f ? keep_scale(p) : 1.0f;
  int nt = threads_for(n);
#pragma omp parallel for simd num_threads(nt) schedule(static)
  for (int64_t i = 0; i < n; ++i) dx[i] = y[i] > 0.0f ? dy[i] * s : 0.0f;
}

}  // namespace tt::backend::cpu
