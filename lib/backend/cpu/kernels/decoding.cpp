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
#include "backend/cpu/kernels/native_lanes.h"

namespace tt::backend::cpu::TT_CPU_ISA {

namespace {

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

// The scaled dot products of the query row's heads h0 .. h0 + kHeads with key row kr, into column j of w.
template <int kHeads>
inline void head_dots(float* w, int max_keys, int j, const float* qr, const float* kr, int h0, int Dh, float scale) {
  Reg acc[kHeads][kRegsPerLanes] = {};
  Reg a, b;
  for (int g = 0; g < kHeads; ++g)
    for (int d = (h0 + g) * Dh; d < (h0 + g + 1) * Dh; d += kLanes)
      for (int r = 0; r < kRegsPerLanes; ++r) {
        load_reg(a, qr + d + r * kRegLanes);
        load_reg(b, kr + d + r * kRegLanes);
        acc[g][r] += a * b;
      }
  float dots[kHeads];
  if constexpr (kHeads == 4) fold4_regs(dots, acc);
  else
    for (int g = 0; g < kHeads; ++g) dots[g] = fold_regs(acc[g]);
  for (int g = 0; g < kHeads; ++g) w[static_cast<int64_t>(h0 + g) * max_keys + j] = dots[g] * scale;
}

// c[at, at + kRegs * kRegLanes) = sum over the keys (ascending) of p[j] * v[keys[j]][same columns].
template <int kRegs>
inline void context_regs(float* c, const float* p, const float* v, int64_t ld, const int32_t* keys, int n, int at) {
  Reg acc[kRegs] = {};
  Reg x;
  for (int j = 0; j < n; ++j) {
    const float* vr = v + static_cast<int64_t>(keys[j]) * ld + at;
    for (int i = 0; i < kRegs; ++i) {
      load_reg(x, vr + i * kRegLanes);
      acc[i] += p[j] * x;
    }
  }
  for (int i = 0; i < kRegs; ++i) store_reg(c + at + i * kRegLanes, acc[i]);
}

// One query row against its keys, Dh a multiple of 16: scores in the 16 lanes of lanes.h (held in native
// registers, 4 heads at a time), the softmax, and each head's context accumulated in registers over the
// keys (ascending). The bits do not depend on the instruction set's register width.
void attend_row_lanes(float* c, float* w, const float* qr, const float* k, const float* v, int64_t ld,
                      const int32_t* keys, int n, int max_keys, int H, int Dh, float scale) {
  for (int j = 0; j < n; ++j) {
    const float* kr = k + static_cast<int64_t>(keys[j]) * ld;
    int h0 = 0;
    for (; h0 + 4 <= H; h0 += 4) head_dots<4>(w, max_keys, j, qr, kr, h0, Dh, scale);
    for (; h0 < H; ++h0) head_dots<1>(w, max_keys, j, qr, kr, h0, Dh, scale);
  }
  softmax_keys(w, n, max_keys, H);
  const int regs = Dh / kRegLanes;
  for (int h = 0; h < H; ++h) {
    const float* p = w + static_cast<int64_t>(h) * max_keys;
    const auto at = [&](int i) { return h * Dh + i * kRegLanes; };
    int i = 0;
    for (; i + 8 <= regs; i += 8) context_regs<8>(c, p, v, ld, keys, n, at(i));
    if (i + 4 <= regs) {
      context_regs<4>(c, p, v, ld, keys, n, at(i));
      i += 4;
    }
    if (i + 2 <= regs) {
      context_regs<2>(c, p, v, ld, keys, n, at(i));
      i += 2;
    }
    if (i < regs) context_regs<1>(c, p, v, ld, keys, n, at(i));
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
