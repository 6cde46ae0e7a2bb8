// Decoding kernels: attention of one query per row over row-addressed cached keys, and per-row top-k.
//   attention_decode: q [rows, H*Dh] (ldq), k/v rows [*, H*Dh] (ld), key_rows [rows, max_keys],
//                     key_counts [rows], ctx [rows, H*Dh] (ldc), probs [rows, H, max_keys] or null
//   topk:             x [rows, V] -> values, indices [rows, k]
//   log_softmax_topk: the same over x - shift, shift [rows] the rows' log-softmax shifts
// Each row is computed by one thread in a fixed order (keys ascending, lanes over Dh), so its bits never
// depend on the other rows or the thread count: beam search stays batch-invariant.
#include <cmath>
#include <cstring>
#include <limits>

#include "backend/cpu/fast_math.h"
#include "backend/cpu/kernels/kernel_functions.h"
#include "backend/cpu/kernels/lanes.h"
#include "backend/cpu/kernels/log_softmax_shift.h"

namespace tt::backend::cpu::TT_CPU_ISA {

namespace {

// The sums of the 16 lanes of each of x[0..3], into out[0..3]: halves of two vectors at a time, so four
// heads cost 6 shuffles and 4 adds instead of four folds of 4 shuffles and 4 adds each.
inline void fold4(float* out, const Lanes* x) {
  const LaneIndex lo{0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23};
  const LaneIndex hi{8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31};
  const Lanes u0 = __builtin_shuffle(x[0], x[1], lo) + __builtin_shuffle(x[0], x[1], hi);  // 8 lanes each
  const Lanes u1 = __builtin_shuffle(x[2], x[3], lo) + __builtin_shuffle(x[2], x[3], hi);
  const LaneIndex lo4{0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27};
  const LaneIndex hi4{4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31};
  Lanes v = __builtin_shuffle(u0, u1, lo4) + __builtin_shuffle(u0, u1, hi4);  // 4 lanes each
  v += __builtin_shuffle(v, LaneIndex{2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13});
  v += __builtin_shuffle(v, LaneIndex{1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14});
  out[0] = v[0];
  out[1] = v[4];
  out[2] = v[8];
  out[3] = v[12];
}

// Each head's scores w[h, 0..n) -> softmax in place, zeros up to max_keys (w: [H, max_keys]).
void softmax_keys(float* w, int n, int max_keys, int H) {
  for (int h = 0; h < H; ++h) {
    float* s = w + static_cast<int64_t>(h) * max_keys;
    const float mx = row_max(s, n);
#pragma omp simd
    for (int j = 0; j < n; ++j) s[j] = fast_exp(s[j] - mx);
    const float inv = 1.0f / row_sum(s, n);
#pragma omp simd
    for (int j = 0; j < n; ++j) s[j] *= inv;
    for (int j = n; j < max_keys; ++j) s[j] = 0.0f;
  }
}

// One query row against its keys, Dh a multiple of 16: scores per head in lanes (4 heads folded at once),
// the softmax over lanes, and each head's context accumulated in registers over the keys (ascending).
void attend_row_lanes(float* c, float* w, const float* qr, const float* k, const float* v, int64_t ld,
                      const int32_t* keys, int n, int max_keys, int H, int Dh, float scale) {
  const int per_head = Dh / kLanes;
  float dots[4];
  for (int j = 0; j < n; ++j) {
    const float* kr = k + static_cast<int64_t>(keys[j]) * ld;
    for (int h0 = 0; h0 < H; h0 += 4) {
      const int heads = H - h0 < 4 ? H - h0 : 4;
      Lanes acc[4] = {}, a, b;
      for (int g = 0; g < heads; ++g)
        for (int i = 0; i < per_head; ++i) {
          load_lanes(a, qr + (h0 + g) * Dh + i * kLanes);
          load_lanes(b, kr + (h0 + g) * Dh + i * kLanes);
          acc[g] += a * b;
        }
      if (heads == 4) fold4(dots, acc);
      else
        for (int g = 0; g < heads; ++g) dots[g] = fold<false>(acc[g]);
      for (int g = 0; g < heads; ++g) w[static_cast<int64_t>(h0 + g) * max_keys + j] = dots[g] * scale;
    }
  }
  softmax_keys(w, n, max_keys, H);
  for (int h = 0; h < H; ++h) {
    const float* p = w + static_cast<int64_t>(h) * max_keys;
    for (int i0 = 0; i0 < per_head; i0 += 4) {
      const int m = per_head - i0 < 4 ? per_head - i0 : 4;
      Lanes acc[4] = {}, x;
      for (int j = 0; j < n; ++j) {
        const float* vr = v + static_cast<int64_t>(keys[j]) * ld + h * Dh + i0 * kLanes;
        for (int i = 0; i < m; ++i) {
          load_lanes(x, vr + i * kLanes);
          acc[i] += p[j] * x;
        }
      }
      for (int i = 0; i < m; ++i) std::memcpy(c + h * Dh + (i0 + i) * kLanes, &acc[i], sizeof(Lanes));
    }
  }
}

// Any Dh: one dot product per (key, head), then the softmax and the context, all in order.
void attend_row(float* c, float* w, const float* qr, const float* k, const float* v, int64_t ld,
                const int32_t* keys, int n, int max_keys, int H, int Dh, float scale) {
  const int D = H * Dh;
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
  softmax_keys(w, n, max_keys, H);
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

}  // namespace

void attention_decode(const KernelContext& ctx, float* out, int64_t ldc, float* probs, const float* q, int64_t ldq,
                      const float* k, const float* v, int64_t ld, const int32_t* key_rows, const int32_t* key_counts,
                      int rows, int max_keys, int H, int Dh, float scale) {
  const int D = H * Dh;
  const int64_t per_row = static_cast<int64_t>(H) * max_keys;
  // Scores go straight into probs when the caller wants them, else into backend scratch.
  float* weights = probs ? probs : kernel_scratch(ctx, static_cast<size_t>(rows * per_row));
  int nt = threads_for(ctx, static_cast<int64_t>(rows) * max_keys * D * 2);
  if (nt > rows) nt = rows;
  const bool lanes = Dh % kLanes == 0;
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int r = 0; r < rows; ++r) {
    const int n = key_counts[r] < 1 ? 1 : (key_counts[r] > max_keys ? max_keys : key_counts[r]);
    const int32_t* keys = key_rows + static_cast<int64_t>(r) * max_keys;
    (lanes ? attend_row_lanes : attend_row)(out + r * ldc, weights + r * per_row, q + r * ldq, k, v, ld, keys, n,
                                            max_keys, H, Dh, scale);
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

// The k best of xr[c] - shift over c < V into val/idx (best first; ties to the lower column; NaN as -inf),
// then their values as computed (a NaN comes back as NaN).
void topk_row(float* val, int32_t* idx, const float* xr, int V, int k, float shift) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  // Scanning columns in ascending order, an equal value never displaces an earlier one.
  int filled = 0;
  auto offer = [&](int c) {
    const float y = xr[c] - shift;
    const float xv = std::isnan(y) ? neg_inf : y;
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
  // the first few hundred columns almost every chunk is (the same picks as offering every column; x -
  // shift is monotonic in x).
  for (; c + 64 <= V; c += 64)
    if (chunk_max(xr + c) - shift > val[k - 1])
      for (int j = c; j < c + 64; ++j) offer(j);
  for (; c < V; ++c) offer(c);
  for (int i = 0; i < k; ++i) val[i] = xr[idx[i]] - shift;
}

}  // namespace

void topk(const KernelContext& ctx, float* values, int32_t* indices, const float* x, int64_t rows, int V, int k) {
  int nt = threads_for(ctx, rows * V);
  if (nt > rows) nt = static_cast<int>(rows);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t r = 0; r < rows; ++r) topk_row(values + r * k, indices + r * k, x + r * V, V, k, 0.0f);
}

// Each row while it is in cache: its log-softmax shift (the same code as log_softmax), then the top k of
// x - shift. Nothing is written to x.
void log_softmax_topk(const KernelContext& ctx, float* values, int32_t* indices, float* shift, const float* x,
                      int64_t rows, int V, int k) {
  int nt = threads_for(ctx, rows * V * 4);
  if (nt > rows) nt = static_cast<int>(rows);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    shift[r] = log_softmax_shift(x + r * V, V);
    topk_row(values + r * k, indices + r * k, x + r * V, V, k, shift[r]);
  }
}

}  // namespace tt::backend::cpu::TT_CPU_ISA
