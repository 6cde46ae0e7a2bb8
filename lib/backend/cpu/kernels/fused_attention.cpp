// Fused scaled dot-product attention for training (forward and backward), one sentence (all its heads) per task.
//   q, ctx, dq, dctx: rows (b, t < Tq) of H heads of Dh columns, row stride ld*   k, v, dk, dv: rows (b, t < Tk)
//   probs: [B, H, Tq, Tk] dense (saved by forward)   key_lengths: [B] (may be null)
// Each task copies its heads' operands into zero-padded tiles in per-thread scratch, runs the products
// with a register-blocked micro-kernel and the softmax and dropout between them while the tile is in L1/L2:
// one parallel region per call where the composition of batched products, softmax and dropout opens four
// (forward) or seven (backward), and no pass over [B, H, Tq, Tk] in memory between them. At d_model 128
// the products are 32 x 32 x 32 and those regions and passes cost about as much as the arithmetic.
// Every row's sums run in a fixed order that depends on nothing but that row (not the thread count, not
// the padded lengths), so a sentence's attention is the same in any batch.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "backend/cpu/fast_math.h"
#include "backend/cpu/kernels/dropout_mask.h"
#include "backend/cpu/kernels/kernel_functions.h"
#include "backend/cpu/kernels/lanes.h"

namespace tt::backend::cpu::TT_CPU_ISA {
namespace {

// Micro-tile: kRows rows of kCols columns of accumulators held in vector registers while k runs.
#if defined(__AVX512F__)
constexpr int kRows = 8;  // 8 zmm accumulators: enough independent FMA chains to hide the latency
#else
constexpr int kRows = 4;
#endif
constexpr int kCols = kLanes;

inline float madd(float a, float b, float c) {
#if defined(__FMA__)
  return std::fma(a, b, c);
#else
  return a * b + c;  // no FMA unit: std::fma would be a library call per element
#endif
}

inline int round_up(int x, int m) { return (x + m - 1) / m * m; }

// Rows [0, R) of C = A B below, N a multiple of kCols.
template <int R>
void tile_rows(float* c, int ldc, const float* a, int a_rs, int a_cs, const float* b, int ldb, int N, int K) {
  for (int n0 = 0; n0 < N; n0 += kCols) {
    float acc[R][kCols] = {};
    const float* ak = a;
    const float* bk = b + n0;
    for (int k = 0; k < K; ++k, ak += a_cs, bk += ldb) {
      for (int r = 0; r < R; ++r) {
        const float av = ak[r * a_rs];
#pragma omp simd
        for (int j = 0; j < kCols; ++j) acc[r][j] = madd(av, bk[j], acc[r][j]);
      }
    }
    for (int r = 0; r < R; ++r) {
#pragma omp simd
      for (int j = 0; j < kCols; ++j) c[r * ldc + n0 + j] = acc[r][j];
    }
  }
}

// C[m][n] = sum_{k < K} A(m, k) * B[k * ldb + n] for m < M, n < N, with A(m, k) = a[m * a_rs + k * a_cs].
// N is a multiple of kCols (the tiles are padded); M is any count: rows past a multiple of kRows run in a
// block of their own size, so no product is spent on padding rows (a sentence of 18 tokens has 18 rows,
// not 24 or 32). k runs in order, one FMA chain per element, whatever the block.
void tile_gemm(float* c, int ldc, const float* a, int a_rs, int a_cs, const float* b, int ldb, int M, int N, int K) {
  int m0 = 0;
  for (; m0 + kRows <= M; m0 += kRows) tile_rows<kRows>(c + m0 * ldc, ldc, a + m0 * a_rs, a_rs, a_cs, b, ldb, N, K);
  c += m0 * ldc;
  a += m0 * a_rs;
  switch (M - m0) {
    case 0: break;
    case 1: tile_rows<1>(c, ldc, a, a_rs, a_cs, b, ldb, N, K); break;
    case 2: tile_rows<2>(c, ldc, a, a_rs, a_cs, b, ldb, N, K); break;
    case 3: tile_rows<3>(c, ldc, a, a_rs, a_cs, b, ldb, N, K); break;
    case 4: tile_rows<4>(c, ldc, a, a_rs, a_cs, b, ldb, N, K); break;
    case 5: tile_rows<5>(c, ldc, a, a_rs, a_cs, b, ldb, N, K); break;
    case 6: tile_rows<6>(c, ldc, a, a_rs, a_cs, b, ldb, N, K); break;
    default: tile_rows<7>(c, ldc, a, a_rs, a_cs, b, ldb, N, K); break;  // kRows is 8 or 4: at most 7 left
  }
}

// The tiles of all H heads of one sentence, copied in one sequential sweep over its rows (a head's slice
// of a row is a few cache lines: read head by head, every row would be a new, unprefetched miss).
// Head h's tile is dst + h * stride: [rows_p][cols_p] = rows of `rows` x Dh, zero elsewhere; transposed,
// [cols_p][rows_p]. Plain loops, not memcpy: the pieces are shorter than a library call's set-up.
void load_heads(float* dst, size_t stride, const float* src, int64_t ld, int rows, int H, int Dh, int rows_p,
                int cols_p) {
  for (int i = 0; i < rows; ++i) {
    for (int h = 0; h < H; ++h) {
      float* d = dst + h * stride + i * cols_p;
      const float* r = src + i * ld + h * Dh;
#pragma omp simd
      for (int j = 0; j < cols_p; ++j) d[j] = j < Dh ? r[j] : 0.0f;
    }
  }
  for (int h = 0; h < H; ++h) std::fill(dst + h * stride + rows * cols_p, dst + h * stride + rows_p * cols_p, 0.0f);
}
#if defined(__AVX512F__)
// GCC 12 warns, wrongly, that the AVX-512 intrinsics' internal placeholder (_mm512_undefined_ps) "may be
// used uninitialized" wherever they are inlined (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// r[i] (row i of a 16 x 16 block) becomes column i: unpack pairs of rows, then 4 x 4 blocks of 128-bit
// lanes, then the lanes across registers (after the second stage r[4i + j]'s lane L holds column 4L + j of
// rows 4i..4i+3).
inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int j = 0; j < 4; ++j) {
    const __m512 u = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88), w = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
    const __m512 u2 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xdd), w2 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xdd);
    t[j] = _mm512_shuffle_f32x4(u, w, 0x88);
    t[8 + j] = _mm512_shuffle_f32x4(u, w, 0xdd);
    t[4 + j] = _mm512_shuffle_f32x4(u2, w2, 0x88);
    t[12 + j] = _mm512_shuffle_f32x4(u2, w2, 0xdd);
  }
  for (int i = 0; i < 16; ++i) r[i] = t[i];
}
#endif

// The transposed tiles: [cols_p][rows_p], zero outside rows x Dh. With AVX-512, in 16 x 16 blocks
// transposed in registers (a scalar scatter with a stride of rows_p was a third of the kernels' own time).
void load_heads_transposed(float* dst, size_t stride, const float* src, int64_t ld, int rows, int H, int Dh,
                           int rows_p, int cols_p) {
#if defined(__AVX512F__)
  for (int h = 0; h < H; ++h)
    for (int i0 = 0; i0 < rows_p; i0 += 16) {
      const __mmask16 keep_rows = static_cast<__mmask16>((1u << std::min(16, rows_p - i0)) - 1);
      for (int c0 = 0; c0 < cols_p; c0 += 16) {
        const __mmask16 cols = static_cast<__mmask16>((1u << std::clamp(Dh - c0, 0, 16)) - 1);
        __m512 r[16];
        for (int i = 0; i < 16; ++i)
          r[i] = i0 + i < rows ? _mm512_maskz_loadu_ps(cols, src + (i0 + i) * ld + h * Dh + c0) : _mm512_setzero_ps();
        transpose16(r);
        float* d = dst + h * stride + static_cast<size_t>(c0) * rows_p + i0;
        for (int c = 0; c < 16 && c0 + c < cols_p; ++c) _mm512_mask_storeu_ps(d + c * rows_p, keep_rows, r[c]);
      }
    }
#else
  for (int h = 0; h < H; ++h) std::fill(dst + h * stride, dst + h * stride + static_cast<size_t>(cols_p) * rows_p, 0.0f);
  for (int i = 0; i < rows; ++i)
    for (int h = 0; h < H; ++h) {
      float* d = dst + h * stride + i;
      const float* r = src + i * ld + h * Dh;
      for (int j = 0; j < Dh; ++j) d[j * rows_p] = r[j];
    }
#endif
}
#if defined(__AVX512F__)
#pragma GCC diagnostic pop
#endif
// Rows of `cols` columns of a [rows][cols_p] tile into dst (stride ld).
void store_tile(float* dst, int64_t ld, const float* src, int rows, int cols, int cols_p) {
  for (int i = 0; i < rows; ++i) {
    float* d = dst + i * ld;
    const float* r = src + i * cols_p;
#pragma omp simd
    for (int j = 0; j < cols; ++j) d[j] = r[j];
  }
}

// The dropout factors (0 or 1/(1-p)) of elements [i0, i0 + n) of the flat probs, into f[0, n), and kCols
// zeros after them (rows read whole vectors past their end). A whole head's tile at once, so that Philox
// runs on full vectors (a row of a few keys would fall to its scalar tail). mask (may be null) receives
// the kept flags, for backward to read instead of drawing the words again (Philox is most of the cost of
// dropout here).
void dropout_factors(float* f, uint8_t* mask, int64_t i0, int n, float p, DropoutKey key) {
  const float s = keep_scale(p);
  const uint32_t thr = util::dropout_threshold(p);  // kept iff draw >= thr (util/rng.h)
  alignas(64) uint32_t buf[kChunk + 40];
  for (int j0 = 0; j0 < n; j0 += kChunk) {
    const int count = std::min(kChunk, n - j0);
    const DrawHalf* d = dropout_draws(buf, i0 + j0, count, key);
#pragma omp simd
    for (int j = 0; j < count; ++j) f[j0 + j] = d[j] >= thr ? s : 0.0f;
  }
  if (mask) {
#pragma omp simd
    for (int j = 0; j < n; ++j) mask[j] = f[j] != 0.0f;
  }
  std::fill(f + n, f + n + kCols, 0.0f);
}
// The same factors from the flags dropout_factors kept.
void mask_factors(float* f, const uint8_t* mask, int n, float p) {
  const float s = keep_scale(p);
#pragma omp simd
  for (int j = 0; j < n; ++j) f[j] = mask[j] ? s : 0.0f;
  std::fill(f + n, f + n + kCols, 0.0f);
}

// Tile sizes. Columns are padded to whole vectors (the products' N, the softmax rows); query rows are not
// (tile_gemm takes any row count), so a query tile has exactly Tq rows.
struct Tiles {
  int Tq, Tk, Dh, TkP, DhP;
  Tiles(int tq, int tk, int dh)
      : Tq(tq), Tk(tk), Dh(dh), TkP(round_up(tk, std::max(kCols, kRows))), DhP(round_up(dh, kCols)) {}
  size_t qd() const { return static_cast<size_t>(Tq) * DhP; }
  size_t kd() const { return static_cast<size_t>(TkP) * DhP; }
  size_t qk() const { return static_cast<size_t>(Tq) * TkP; }
};

int key_length(const int32_t* key_lengths, int b, int Tk) {
  return std::max(1, key_lengths ? std::min(Tk, key_lengths[b]) : Tk);
}

// Tasks (heads) worth spreading over threads: ~16k multiply-adds each make a fork/join worth it.
int attention_threads(const KernelContext& ctx, int tasks, int64_t fmas) {
  return std::min(tasks, threads_for(ctx, fmas / 4));
}

}  // namespace

void attention_forward(const KernelContext& ctx, const AttentionForwardArgs& a) {
  // Plain locals, not structured bindings: OpenMP regions below use them (clang cannot capture bindings).
  const int B = a.z.B, H = a.z.H, Tq = a.z.Tq, Tk = a.z.Tk, Dh = a.z.Dh;
  const float scale = a.scale, p = a.p;
  const bool causal = a.causal;
  const DropoutKey key = a.key;
  float* out = a.ctx.data;
  const int64_t ldc = a.ctx.ld, ldq = a.q.ld, ldk = a.k.ld, ldv = a.v.ld;
  const float *q = a.q.data, *k = a.k.data, *v = a.v.data;
  float* probs = a.probs;
  uint8_t* mask = a.flags;
  const int32_t* key_lengths = a.key_lengths;
  const Tiles t(Tq, Tk, Dh);
  const size_t tile = static_cast<size_t>(Tq) * Tk;
  // Every head's Q, K^T, V tiles; then one head's scores and context, and the dropout factors.
  const size_t per_thread = H * (t.qd() + 2 * t.kd()) + t.qk() + t.qd() + (p > 0.0f ? tile + kCols : 0);
  const int nt = attention_threads(ctx, B, int64_t{B} * H * Tq * Tk * Dh * 2);
  float* scratch = kernel_scratch(ctx, per_thread * static_cast<size_t>(nt));
  const float neg_inf = -std::numeric_limits<float>::infinity();
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int b = 0; b < B; ++b) {
    float* qs = scratch + per_thread * static_cast<size_t>(nt > 1 ? omp_get_thread_num() : 0);  // H x [Tq][DhP]
    float* kt = qs + H * t.qd();  // H x [DhP][TkP]
    float* vs = kt + H * t.kd();  // H x [TkP][DhP]
    float* s = vs + H * t.kd();   // [Tq][TkP] scores, then weights
    float* cs = s + t.qk();       // [Tq][DhP]
    float* factors = cs + t.qd();  // [Tq][Tk] dropout factors (p > 0), then kCols of slack
    load_heads(qs, t.qd(), q + int64_t{b} * Tq * ldq, ldq, Tq, H, Dh, Tq, t.DhP);
    load_heads_transposed(kt, t.kd(), k + int64_t{b} * Tk * ldk, ldk, Tk, H, Dh, t.TkP, t.DhP);
    load_heads(vs, t.kd(), v + int64_t{b} * Tk * ldv, ldv, Tk, H, Dh, t.TkP, t.DhP);
    const int klen = key_length(key_lengths, b, Tk);
    for (int h = 0; h < H; ++h) {
      const int64_t task = int64_t{b} * H + h;
      tile_gemm(s, t.TkP, qs + h * t.qd(), t.DhP, 1, kt + h * t.kd(), t.TkP, Tq, t.TkP, Dh);  // S = Q K^T
      float* saved = probs + task * Tq * Tk;
      if (p > 0.0f) dropout_factors(factors, mask ? mask + task * Tq * Tk : nullptr, task * Tq * Tk, Tq * Tk, p, key);
      for (int i = 0; i < Tq; ++i) {
        float* row = s + i * t.TkP;
        const int len = causal ? std::max(1, std::min(klen, i + 1)) : klen;
        // As attention_softmax_forward: masked keys -inf (exp exactly 0), so the sum covers the unmasked
        // keys alone; full padded rows with no remainder loops.
#pragma omp simd
        for (int j = 0; j < t.TkP; ++j) row[j] = j < len ? row[j] * scale : neg_inf;
        const float mx = row_max(row, t.TkP);
#pragma omp simd
        for (int j = 0; j < t.TkP; ++j) row[j] = fast_exp_nonpositive(row[j] - mx);
        const float inv = 1.0f / row_sum(row, t.TkP);
        float* saved_row = saved + int64_t{i} * Tk;
#pragma omp simd
        for (int j = 0; j < Tk; ++j) saved_row[j] = row[j] * inv;
        if (p > 0.0f) {
          const float* f = factors + i * Tk;  // read past Tk into the next row or the slack: multiplies 0
#pragma omp simd
          for (int j = 0; j < t.TkP; ++j) row[j] = row[j] * inv * f[j];
        } else {
#pragma omp simd
          for (int j = 0; j < t.TkP; ++j) row[j] *= inv;
        }
      }
      // Keys past the sentence have weight exactly 0, so the product stops at klen.
      tile_gemm(cs, t.DhP, s, t.TkP, 1, vs + h * t.kd(), t.DhP, Tq, t.DhP, klen);  // ctx = W V
      store_tile(out + int64_t{b} * Tq * ldc + h * Dh, ldc, cs, Tq, Dh, t.DhP);
    }
  }
}

void attention_backward(const KernelContext& ctx, const AttentionBackwardArgs& a) {
  const int B = a.z.B, H = a.z.H, Tq = a.z.Tq, Tk = a.z.Tk, Dh = a.z.Dh;
  const float scale = a.scale, p = a.p;
  const DropoutKey key = a.key;
  float *dq = a.dq.data, *dk = a.dk.data, *dv = a.dv.data;
  const int64_t lddq = a.dq.ld, lddk = a.dk.ld, lddv = a.dv.ld, lddc = a.dctx.ld, ldq = a.q.ld, ldk = a.k.ld,
                ldv = a.v.ld;
  const float *dctx = a.dctx.data, *probs = a.probs, *q = a.q.data, *k = a.k.data, *v = a.v.data;
  const uint8_t* mask = a.flags;
  const Tiles t(Tq, Tk, Dh);
  // Every head's Q, dctx (qd), K, V^T (kd) tiles; then one head's dQ (qd), dK, dV (kd), P, W, dS (qk) and
  // the dropout factors.
  const size_t tile = static_cast<size_t>(Tq) * Tk;
  const size_t per_thread =
      H * (2 * t.qd() + 2 * t.kd()) + t.qd() + 2 * t.kd() + 3 * t.qk() + (p > 0.0f ? tile + kCols : 0);
  const int nt = attention_threads(ctx, B, int64_t{B} * H * Tq * Tk * Dh * 4);
  float* scratch = kernel_scratch(ctx, per_thread * static_cast<size_t>(nt));
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int b = 0; b < B; ++b) {
    float* qs = scratch + per_thread * static_cast<size_t>(nt > 1 ? omp_get_thread_num() : 0);  // H x [Tq][DhP]
    float* dcs = qs + H * t.qd();  // H x [Tq][DhP]
    float* ks = dcs + H * t.qd();  // H x [TkP][DhP]
    float* vt = ks + H * t.kd();   // H x [DhP][TkP]
    float* dqs = vt + H * t.kd();  // [Tq][DhP]
    float* dks = dqs + t.qd();     // [TkP][DhP]
    float* dvs = dks + t.kd();     // [TkP][DhP]
    float* ps = dvs + t.kd();      // [Tq][TkP] probs
    float* ws = ps + t.qk();       // [Tq][TkP] weights after dropout
    float* ds = ws + t.qk();       // [Tq][TkP] d(weights), then d(scores)
    float* factors = ds + t.qk();
    load_heads(qs, t.qd(), q + int64_t{b} * Tq * ldq, ldq, Tq, H, Dh, Tq, t.DhP);
    load_heads(dcs, t.qd(), dctx + int64_t{b} * Tq * lddc, lddc, Tq, H, Dh, Tq, t.DhP);
    load_heads(ks, t.kd(), k + int64_t{b} * Tk * ldk, ldk, Tk, H, Dh, t.TkP, t.DhP);
    load_heads_transposed(vt, t.kd(), v + int64_t{b} * Tk * ldv, ldv, Tk, H, Dh, t.TkP, t.DhP);
    for (int h = 0; h < H; ++h) {
      const int64_t task = int64_t{b} * H + h;
      const float* qh = qs + h * t.qd();
      const float* dch = dcs + h * t.qd();
      load_heads(ps, 0, probs + task * Tq * Tk, Tk, Tq, 1, Tk, Tq, t.TkP);
      const float* w = ps;
      if (p > 0.0f) {
        if (mask) mask_factors(factors, mask + task * Tq * Tk, Tq * Tk, p);
        else dropout_factors(factors, nullptr, task * Tq * Tk, Tq * Tk, p, key);
        for (int i = 0; i < Tq; ++i) {
          float* row = ws + i * t.TkP;
          const float* f = factors + i * Tk;
          const float* pr = ps + i * t.TkP;
#pragma omp simd
          for (int j = 0; j < t.TkP; ++j) row[j] = j < Tk ? pr[j] * f[j] : 0.0f;
        }
        w = ws;
      }
      tile_gemm(ds, t.TkP, dch, t.DhP, 1, vt + h * t.kd(), t.TkP, Tq, t.TkP, Dh);  // dW = dctx V^T
      tile_gemm(dvs, t.DhP, w, 1, t.TkP, dch, t.DhP, Tk, t.DhP, Tq);             // dV = W^T dctx
      for (int i = 0; i < Tq; ++i) {
        float* g = ds + i * t.TkP;
        const float* pr = ps + i * t.TkP;
        if (p > 0.0f) {
          const float* f = factors + i * Tk;  // past Tk: multiplies 0 (dW is 0 on the padding)
#pragma omp simd
          for (int j = 0; j < t.TkP; ++j) g[j] *= f[j];
        }
        // As attention_softmax_backward: dS = scale * P * (dP - sum(dP * P)); 0 on the padding (P = 0).
        const float dot = row_dot(g, pr, t.TkP);
#pragma omp simd
        for (int j = 0; j < t.TkP; ++j) g[j] = scale * pr[j] * (g[j] - dot);
      }
      tile_gemm(dqs, t.DhP, ds, t.TkP, 1, ks + h * t.kd(), t.DhP, Tq, t.DhP, Tk);  // dQ = dS K
      tile_gemm(dks, t.DhP, ds, 1, t.TkP, qh, t.DhP, Tk, t.DhP, Tq);             // dK = dS^T Q
      store_tile(dq + int64_t{b} * Tq * lddq + h * Dh, lddq, dqs, Tq, Dh, t.DhP);
      store_tile(dk + int64_t{b} * Tk * lddk + h * Dh, lddk, dks, Tk, Dh, t.DhP);
      store_tile(dv + int64_t{b} * Tk * lddv + h * Dh, lddv, dvs, Tk, Dh, t.DhP);
    }
  }
}

}  // namespace tt::backend::cpu::TT_CPU_ISA
