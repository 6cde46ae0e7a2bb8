#include "viz/alignment.h"

#include <algorithm>
#include <cstdio>

#include "util/error.h"

namespace tt::viz {

Alignment cross_alignment(const SentenceAttention& a, const std::vector<int>& layers, const std::vector<int>& heads,
                          bool merge_words, const Tokens& src, const Tokens& tgt_pieces) {
  if (a.cross.empty()) throw InternalError("cross_alignment: cross-attention was not captured");
  const int T = a.T(), S = a.S();
  Alignment m{T, S, std::vector<float>(static_cast<size_t>(T) * S, 0.0f)};
  const float n = static_cast<float>(layers.size() * heads.size());  // divide each term, as the search does
  for (int l : layers)
    for (int h : heads) {
      const float* p = a.cross.data() + a.offset(Kind::cross, l, h);
      for (size_t k = 0; k < m.data.size(); ++k) m.data[k] += p[k] / n;
    }
  if (!merge_words) return m;
  const std::vector<int> rg = word_of_pieces(tgt_pieces), cg = word_of_pieces(src);
  const int Rw = rg.empty() ? 0 : rg.back() + 1, Cw = cg.empty() ? 0 : cg.back() + 1;
  return Alignment{Rw, Cw, merge_matrix(m.data.data(), T, S, rg, Rw, cg, Cw)};
}

std::string hard_alignment(const Alignment& m) {
  std::string s;
  if (m.cols < 2) return s;
  for (int t = 0; t + 1 < m.rows; ++t) {  // the last row (</s>) and column (</s>) are not aligned
    const float* row = m.data.data() + static_cast<size_t>(t) * m.cols;
    const int best = static_cast<int>(std::max_element(row, row + m.cols - 1) - row);
    if (!s.empty()) s += ' ';
    s += std::to_string(best) + "-" + std::to_string(t);
  }
  return s;
}

std::string soft_alignment(const Alignment& m) {
  std::string s;
  char buf[32];
  for (int t = 0; t < m.rows; ++t) {
    if (t) s += ' ';
    for (int i = 0; i < m.cols; ++i) {
      std::snprintf(buf, sizeof buf, i ? ",%.6g" : "%.6g", static_cast<double>(m.data[static_cast<size_t>(t) * m.cols + i]));
      s += buf;
    }
  }
  return s;
}

}  // namespace tt::viz
