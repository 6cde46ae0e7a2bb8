// Naive double-precision references of the decoding kernels in backend/backend.h (attention_decode, topk):
// the oracle for the CPU and CUDA backends alike. Plain loops, the formulas as the contract states them.
// Host pointers only; inputs float (what a backend sees), outputs double where a backend's rounding is
// to be bounded.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

namespace tt::reference {

// Per row r and head h: p_j = softmax_j(scale * q[r] . k[key_rows[r, j]]) over j < key_counts[r], and
// ctx[r, h*Dh + d] = sum_j p_j v[key_rows[r, j], h*Dh + d]. ctx: [rows, H*Dh] (row stride ldc; other
// columns untouched); probs: null or [rows, H, max_keys], exact 0 for j >= key_counts[r].
inline void attention_decode(double* ctx, int64_t ldc, double* probs, const float* q, int64_t ldq, const float* k,
                             const float* v, int64_t ld, const int32_t* key_rows, const int32_t* key_counts,
                             int rows, int max_keys, int H, int Dh, double scale) {
  std::vector<double> p(static_cast<size_t>(max_keys));
  for (int r = 0; r < rows; ++r) {
    const int count = key_counts[r];
    const int32_t* keys = key_rows + int64_t{r} * max_keys;
    for (int h = 0; h < H; ++h) {
      const int64_t column = int64_t{h} * Dh;
      double mx = -std::numeric_limits<double>::infinity();
      for (int j = 0; j < count; ++j) {
        double dot = 0.0;
        for (int d = 0; d < Dh; ++d)
          dot += static_cast<double>(q[r * ldq + column + d]) * k[int64_t{keys[j]} * ld + column + d];
        p[j] = scale * dot;
        mx = std::max(mx, p[j]);
      }
      double sum = 0.0;
      for (int j = 0; j < count; ++j) sum += (p[j] = std::exp(p[j] - mx));
      for (int j = 0; j < count; ++j) p[j] /= sum;
      for (int d = 0; d < Dh; ++d) {
        double c = 0.0;
        for (int j = 0; j < count; ++j) c += p[j] * v[int64_t{keys[j]} * ld + column + d];
        ctx[r * ldc + column + d] = c;
      }
      if (probs)
        for (int j = 0; j < max_keys; ++j) probs[(int64_t{r} * H + h) * max_keys + j] = j < count ? p[j] : 0.0;
    }
  }
}

// Per row of x [rows, V]: the k largest values, best first, and their columns. Larger value first, ties to
// the lower index, NaN ranks as -inf (and ties with it), -0 ties with +0. values[r, j] = x[r, indices[r, j]]
// as stored (a NaN stays NaN). values, indices: [rows, k].
inline void topk(double* values, int32_t* indices, const float* x, int64_t rows, int V, int k) {
  std::vector<int32_t> order(static_cast<size_t>(V));
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * V;
    auto rank_value = [&](int32_t i) {
      return std::isnan(row[i]) ? -std::numeric_limits<double>::infinity() : static_cast<double>(row[i]);
    };
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t a, int32_t b) { return rank_value(a) > rank_value(b); });  // stable: lower index first
    for (int j = 0; j < k; ++j) {
      indices[r * k + j] = order[j];
      values[r * k + j] = row[order[j]];
    }
  }
}

}  // namespace tt::reference
