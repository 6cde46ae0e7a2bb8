// Decoding kernels: attention of one query per row over row-addressed cached keys, and per-row top-k.
//   attention_decode: q [rows, H*Dh] (ldq), k/v rows [*, H*Dh] (ld), key_rows [rows, max_keys],
//                     key_counts [rows], ctx [rows, H*Dh] (ldc), probs [rows, H, max_keys] or null
//   topk:             x [rows, V] -> values, indices [rows, k]
// Each row is computed by one thread in a fixed order (keys ascending, lanes over Dh), so its bits never
// depend on the other rows or the thread count: beam search stays batch-invariant.
#include <cmath>
#include <limits>

#include "backend/cpu/fast_math.h"
#include "backend/cpu/kernels/kernel_functions.h"
#include "backend/cpu/kernels/lanes.h"

namespace tt::backend::cpu::TT_CPU_ISA {

void attention_decode(const KernelContext& ctx, float* out, int64_t ldc, float* probs, const float* q, int64_t ldq,
                      const float* k, const float* v, int64_t ld, const int32_t* key_rows, const int32_t* key_counts,
                      int rows, int max_keys, int H, int Dh, float scale) {
  const int D = H * Dh;
  const int64_t per_row = static_cast<int64_t>(H) * max_keys;
  // Scores go straight into probs when the caller wants them, else into backend scratch.
  float* weights = probs ? probs : kernel_scratch(ctx, static_cast<size_t>(rows * per_row));
  int nt = threads_for(ctx, static_cast<int64_t>(rows) * max_keys * D * 2);
  if (nt > rows) nt = rows;
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int r = 0; r < rows; ++r) {
    const int n = key_counts[r] < 1 ? 1 : (key_counts[r] > max_keys ? max_keys : key_counts[r]);
    const int32_t* keys = key_rows + static_cast<int64_t>(r) * max_keys;
    const float* qr = q + r * ldq;
    float* w = weights + r * per_row;  // [H, max_keys]
    for (int j = 0; j < n; ++j) {
      const float* kr = k + static_cast<int64_t>(keys[j]) * ld;
      for (int h = 0; h < H; ++h) {
        const float* qh = qr + h * Dh;
        const float* kh = kr + h * Dh;
        float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
        for (int d = 0; d < Dh; ++d) dot += qh[d] * kh[d];
        w[static_cast<int64_t>(h) * max_keys + j] = dot * scale;
      }
    }
    for (int h = 0; h < H; ++h) {
      float* s = w + static_cast<int64_t>(h) * max_keys;
      float mx = -std::numeric_limits<float>::infinity();
      for (int j = 0; j < n; ++j) mx = std::max(mx, s[j]);
      float sum = 0.0f;
      for (int j = 0; j < n; ++j) {
        s[j] = fast_exp(s[j] - mx);
        sum += s[j];
      }
      const float inv = 1.0f / sum;
      for (int j = 0; j < n; ++j) s[j] *= inv;
      for (int j = n; j < max_keys; ++j) s[j] = 0.0f;
    }
    float* c = out + r * ldc;
    for (int d = 0; d < D; ++d) c[d] = 0.0f;
    for (int j = 0; j < n; ++j) {
      const float* vr = v + static_cast<int64_t>(keys[j]) * ld;
      for (int h = 0; h < H; ++h) {
        const float p = w[static_cast<int64_t>(h) * max_keys + j];
        float* ch = c + h * Dh;
        const float* vh = vr + h * Dh;
#pragma omp simd
        for (int d = 0; d < Dh; ++d) ch[d] += p * vh[d];
      }
    }
  }
}

namespace {

// Largest of x[0, 64), NaN read as -inf: one value per 64 columns to test against the k-th best so far.
inline float chunk_max(const float* x) {
  const Lanes neg_inf = Lanes{} - std::numeric_limits<float>::infinity();
  Lanes m = neg_inf, v;
  for (int j = 0; j < 64; j += kLanes) {
    load_lanes(v, x + j);
    v = v == v ? v : neg_inf;  // NaN compares false: it could otherwise hide a candidate of its chunk
    m = m > v ? m : v;
  }
  return fold<true>(m);
}

}  // namespace

void topk(const KernelContext& ctx, float* values, int32_t* indices, const float* x, int64_t rows, int V, int k) {
  int nt = threads_for(ctx, rows * V);
  if (nt > rows) nt = static_cast<int>(rows);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * V;
    float* val = values + r * k;
    int32_t* idx = indices + r * k;
    const float neg_inf = -std::numeric_limits<float>::infinity();
    // Sorted best first; scanning columns in ascending order, an equal value never displaces an
    // earlier one, so ties keep the lower index.
    int filled = 0;
    auto offer = [&](int c) {
      const float xv = std::isnan(xr[c]) ? neg_inf : xr[c];
      if (filled == k && !(xv > val[k - 1])) return;
      int at = filled < k ? filled++ : k - 1;
      while (at > 0 && xv > val[at - 1]) {
        val[at] = val[at - 1];
        idx[at] = idx[at - 1];
        --at;
      }
      val[at] = xv;
      idx[at] = c;
    };
    int c = 0;
    for (; c < V && filled < k; ++c) offer(c);
    // Once k are held, a chunk of 64 whose largest value does not beat the k-th is skipped whole: after
    // the first few hundred columns almost every chunk is (the same picks as offering every column).
    for (; c + 64 <= V; c += 64)
      if (chunk_max(xr + c) > val[k - 1])
        for (int j = c; j < c + 64; ++j) offer(j);
    for (; c < V; ++c) offer(c);
    for (int i = 0; i < k; ++i) val[i] = xr[idx[i]];  // the values as stored (a NaN comes back as NaN)
  }
}

}  // namespace tt::backend::cpu::TT_CPU_ISA
