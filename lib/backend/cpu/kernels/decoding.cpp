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

#if defined(__AVX__)
#include <immintrin.h>
#endif

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
    for (int j = 0; j < n; ++j) s[j] = fast_exp_nonpositive(s[j] - mx);
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

#if defined(__AVX512F__)
// Sixteen fold_regs at once: lane s of the result is x[s]'s 16 lanes added in fold<false>'s tree (l with
// l + 8, then + 4, + 2, + 1), so it equals fold_regs(x[s]) to the bit; 15 additions and 30 two-register
// shuffles, against 16 folds' shuffles, extractions and single stores.
inline Reg fold16_regs(const Reg* x) {
  const RegIndex lo8{0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23};
  const RegIndex hi8{8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31};
  const RegIndex lo4{0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27};
  const RegIndex hi4{4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31};
  const RegIndex lo2{0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29};
  const RegIndex hi2{2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31};
  const RegIndex lo1{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30};
  const RegIndex hi1{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31};
  Reg u[8], v[4], w[2];
  // Each step halves the registers: a register of the result holds its two sources' lanes side by side.
  for (int i = 0; i < 8; ++i)  // 8 lanes per source
    u[i] = __builtin_shuffle(x[2 * i], x[2 * i + 1], lo8) + __builtin_shuffle(x[2 * i], x[2 * i + 1], hi8);
  for (int i = 0; i < 4; ++i)  // 4
    v[i] = __builtin_shuffle(u[2 * i], u[2 * i + 1], lo4) + __builtin_shuffle(u[2 * i], u[2 * i + 1], hi4);
  for (int i = 0; i < 2; ++i)  // 2
    w[i] = __builtin_shuffle(v[2 * i], v[2 * i + 1], lo2) + __builtin_shuffle(v[2 * i], v[2 * i + 1], hi2);
  return __builtin_shuffle(w[0], w[1], lo1) + __builtin_shuffle(w[0], w[1], hi1);
}

// head_dots for one head over up to 16 keys at a time, the head's query held in registers: the scaled dot
// products of qh (kRegs registers) with key rows keys[0, count) (k: the head's first column) into
// w[0, count). Each sum is accumulated and folded as head_dots does it: the same bits.
template <int kRegs>
void head_dots16(float* w, const float* qh, const float* k, int64_t ld, const int32_t* keys, int count, float scale) {
  Reg q[kRegs];
  for (int r = 0; r < kRegs; ++r) load_reg(q[r], qh + r * kRegLanes);
  for (int j0 = 0; j0 < count; j0 += 16) {
    const int n = count - j0 < 16 ? count - j0 : 16;
    Reg acc[16] = {};
    Reg b;
    // All 16 always (a short group repeats its first key, whose dots are not stored): a loop of fixed
    // length keeps acc in registers, a variable one left it on the stack.
#pragma GCC unroll 16
    for (int s = 0; s < 16; ++s) {
      const float* kr = k + static_cast<int64_t>(keys[j0 + (s < n ? s : 0)]) * ld;
      for (int r = 0; r < kRegs; ++r) {
        load_reg(b, kr + r * kRegLanes);
        acc[s] += q[r] * b;
      }
    }
    const Reg dots = fold16_regs(acc) * scale;
    if (n == 16) store_reg(w + j0, dots);
    else std::memcpy(w + j0, &dots, sizeof(float) * static_cast<size_t>(n));
  }
}

// attend_row_lanes' scores with head_dots16 where a head is 1, 2, 4 or 8 registers; false where it is not.
bool head_scores16(float* w, const float* qr, const float* k, int64_t ld, const int32_t* keys, int n, int max_keys,
                   int H, int Dh, float scale) {
  void (*dots)(float*, const float*, const float*, int64_t, const int32_t*, int, float) =
      Dh == 16    ? head_dots16<1>
      : Dh == 32  ? head_dots16<2>
      : Dh == 64  ? head_dots16<4>
      : Dh == 128 ? head_dots16<8>
                  : nullptr;
  if (!dots) return false;
  for (int h = 0; h < H; ++h) dots(w + static_cast<int64_t>(h) * max_keys, qr + h * Dh, k + h * Dh, ld, keys, n, scale);
  return true;
}
#endif

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
// registers; with AVX-512 and Dh 16-128, one head over 16 keys at a time, else 4 heads over one key), the
// softmax, and each head's context accumulated in registers over the keys (ascending). The bits do not
// depend on the instruction set's register width.
void attend_row_lanes(float* c, float* w, const float* qr, const float* k, const float* v, int64_t ld,
                      const int32_t* keys, int n, int max_keys, int H, int Dh, float scale) {
#if defined(__AVX512F__)
  if (!head_scores16(w, qr, k, ld, keys, n, max_keys, H, Dh, scale))
#endif
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

// Whether some x[j] - shift > thr, j < 64 (NaN: no), which is chunk_max(x) - shift > thr: x - shift is
// monotonic in x. With AVX-512 the lanes' maxima are tested at once, without chunk_max's NaN masking and
// fold to one value (the top-k's pass over a row of logits had taken half as long as the row's log-softmax
// shift).
inline bool chunk_beats(const float* x, float shift, float thr) {
#if defined(__AVX512F__)
  Lanes m = Lanes{} - std::numeric_limits<float>::infinity(), v;
  for (int j = 0; j < 64; j += kLanes) {
    load_lanes(v, x + j);
    m = v > m ? v : m;  // a NaN v compares false: m keeps its lanes
  }
  __m512 lanes;
  std::memcpy(&lanes, &m, sizeof lanes);
  return _mm512_cmp_ps_mask(_mm512_sub_ps(lanes, _mm512_set1_ps(shift)), _mm512_set1_ps(thr), _CMP_GT_OQ) != 0;
#else
  return chunk_max(x) - shift > thr;
#endif
}

// Bit l set where x[l] - shift > thr, l < 16 (NaN: clear), with offer's own subtraction. A column that
// does not beat the k-th best now cannot later either (the k-th only rises), so offering only the set bits
// picks what offering every column would.
inline uint32_t lanes_above(const float* x, float shift, float thr) {
#if defined(__AVX512F__)
  const __m512 y = _mm512_sub_ps(_mm512_loadu_ps(x), _mm512_set1_ps(shift));
  return _mm512_cmp_ps_mask(y, _mm512_set1_ps(thr), _CMP_GT_OQ);
#elif defined(__AVX__)
  const __m256 s = _mm256_set1_ps(shift), t = _mm256_set1_ps(thr);
  const __m256 lo = _mm256_cmp_ps(_mm256_sub_ps(_mm256_loadu_ps(x), s), t, _CMP_GT_OQ);
  const __m256 hi = _mm256_cmp_ps(_mm256_sub_ps(_mm256_loadu_ps(x + 8), s), t, _CMP_GT_OQ);
  return static_cast<uint32_t>(_mm256_movemask_ps(lo)) | static_cast<uint32_t>(_mm256_movemask_ps(hi)) << 8;
#else
  uint32_t m = 0;
  for (int l = 0; l < kLanes; ++l) m |= static_cast<uint32_t>(x[l] - shift > thr) << l;
  return m;
#endif
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
    if (chunk_beats(xr + c, shift, val[k - 1]))
      for (int j = c; j < c + 64; j += kLanes)  // offer only the columns that beat the k-th now
        for (uint32_t m = lanes_above(xr + j, shift, val[k - 1]); m != 0; m &= m - 1) offer(j + __builtin_ctz(m));
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
