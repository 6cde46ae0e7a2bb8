#include "metrics/translation_edit_rate.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "util/error.h"

namespace tt::metrics {

namespace {

constexpr int kMaxShiftSize = 10;
constexpr int kMaxShiftDist = 50;
constexpr int kBeamWidth = 25;
constexpr int kMaxShiftCandidates = 1000;
constexpr int64_t kInfinity = 10000000000000000;  // int(1e16)

enum Op : char { op_ins = 'i', op_del = 'd', op_nop = ' ', op_sub = 's', op_undef = 'x' };

struct Cell {
  int64_t cost;
  char op;
};

// BeamEditDistance without sacreBLEU's prefix cache (which only memoises rows: all hypotheses scored
// against one reference in a TER computation have the same length, so rows depend only on the prefix).
// Candidates share a prefix with the hypothesis being shifted; `cost_from` restarts from its stored row.
class BeamEditDistance {
 public:
  explicit BeamEditDistance(const std::vector<uint32_t>& ref) : ref_(ref), n_ref_(ref.size()) {}

  // Full matrix for `hyp`, kept for cost_from(); returns the distance and the trace.
  int64_t full(const std::vector<uint32_t>& hyp, std::string& trace) {
    const size_t n_h = hyp.size(), width = n_ref_ + 1;
    matrix_.assign((n_h + 1) * width, Cell{kInfinity, op_undef});
    for (size_t j = 0; j <= n_ref_; ++j) matrix_[j] = Cell{static_cast<int64_t>(j), op_ins};
    set_beam(n_h);
    for (size_t i = 1; i <= n_h; ++i) fill_row(hyp, i, &matrix_[(i - 1) * width], &matrix_[i * width], n_h);
    trace.clear();
    size_t i = n_h, j = n_ref_;
    while (i > 0 || j > 0) {
      char op = matrix_[i * width + j].op;
      trace.push_back(op);
      if (op == op_sub || op == op_nop) {
        --i;
        --j;
      } else if (op == op_ins) {
        --j;
      } else if (op == op_del) {
        --i;
      } else {
        throw InternalError("TER: undefined edit operation in the trace");
      }
    }
    std::reverse(trace.begin(), trace.end());
    return matrix_[n_h * width + n_ref_].cost;
  }

  // Distance of `hyp`, whose first `shared` words equal those of the last full() hypothesis.
  int64_t cost_from(const std::vector<uint32_t>& hyp, size_t shared) {
    const size_t n_h = hyp.size(), width = n_ref_ + 1;
    if (shared >= n_h) return matrix_[n_h * width + n_ref_].cost;
    prev_.assign(matrix_.begin() + shared * width, matrix_.begin() + (shared + 1) * width);
    for (size_t i = shared + 1; i <= n_h; ++i) {
      row_.assign(width, Cell{kInfinity, op_undef});
      fill_row(hyp, i, prev_.data(), row_.data(), n_h);
      prev_.swap(row_);
    }
    return prev_[n_ref_].cost;
  }

 private:
  void set_beam(size_t n_h) {
    length_ratio_ = n_h ? static_cast<double>(n_ref_) / static_cast<double>(n_h) : 1.0;
    beam_width_ = kBeamWidth < length_ratio_ / 2 ? static_cast<long>(std::ceil(length_ratio_ / 2 + kBeamWidth))
                                                 : kBeamWidth;
  }

  void fill_row(const std::vector<uint32_t>& hyp, size_t i, const Cell* prev, Cell* row, size_t n_h) const {
    long pseudo_diag = static_cast<long>(std::floor(static_cast<double>(i) * length_ratio_));
    long min_j = std::max(0L, pseudo_diag - beam_width_);
    long max_j = std::min(static_cast<long>(n_ref_) + 1, pseudo_diag + beam_width_);
    if (i == n_h) max_j = static_cast<long>(n_ref_) + 1;
    for (long j = min_j; j < max_j; ++j) {
      if (j == 0) {
        row[0] = Cell{prev[0].cost + 1, op_del};
        continue;
      }
      bool same = hyp[i - 1] == ref_[j - 1];
      // no-op/substitution, then deletion, then insertion (flipped preference, see lib_ter)
      Cell best = row[j];
      int64_t c = prev[j - 1].cost + (same ? 0 : 1);
      if (best.cost > c) best = Cell{c, same ? op_nop : op_sub};
      c = prev[j].cost + 1;
      if (best.cost > c) best = Cell{c, op_del};
      c = row[j - 1].cost + 1;
      if (best.cost > c) best = Cell{c, op_ins};
      row[j] = best;
    }
  }

  const std::vector<uint32_t>& ref_;
  size_t n_ref_;
  double length_ratio_ = 1.0;
  long beam_width_ = kBeamWidth;
  std::vector<Cell> matrix_, prev_, row_;
};

std::vector<uint32_t> perform_shift(const std::vector<uint32_t>& w, size_t start, size_t length, size_t target) {
  std::vector<uint32_t> out;
  out.reserve(w.size());
  auto add = [&](size_t from, size_t to) {
    to = std::min(to, w.size());
    if (from < to) out.insert(out.end(), w.begin() + from, w.begin() + to);
  };
  if (target < start) {
    add(0, target);
    add(start, start + length);
    add(target, start);
    add(start + length, w.size());
  } else if (target > start + length) {
    add(0, start);
    add(start + length, target);
    add(start, start + length);
    add(target, w.size());
  } else {
    add(0, start);
    add(start + length, length + target);
    add(start, start + length);
    add(length + target, w.size());
  }
  return out;
}

struct ShiftResult {
  int64_t delta = 0;
  std::vector<uint32_t> words;
};

// One round of sacreBLEU's _shift: the best shift of `words_h` (or none).
ShiftResult best_shift(const std::vector<uint32_t>& words_h, const std::vector<uint32_t>& words_r,
                       BeamEditDistance& ed, int& checked) {
  std::string inv_trace;
  const int64_t pre_score = ed.full(words_h, inv_trace);
  // Alignment from the flipped trace (rewriting the reference into the hypothesis).
  std::vector<long> align(words_r.size(), -1);
  std::vector<int> ref_err, hyp_err;
  long pos_h = -1, pos_r = -1;
  for (char op : inv_trace) {
    if (op == op_nop || op == op_sub) {
      ++pos_h;
      ++pos_r;
      align[pos_r] = pos_h;
      hyp_err.push_back(op == op_sub);
      ref_err.push_back(op == op_sub);
    } else if (op == op_del) {  // flipped to an insertion: a hypothesis word
      ++pos_h;
      hyp_err.push_back(1);
    } else if (op == op_ins) {  // flipped to a deletion: a reference word
      ++pos_r;
      align[pos_r] = pos_h;
      ref_err.push_back(1);
    }
  }
  auto any_error = [](const std::vector<int>& err, size_t from, size_t length) {
    for (size_t k = from; k < std::min(err.size(), from + length); ++k) {
      if (err[k]) return true;
    }
    return false;
  };
  bool have_best = false;
  std::tuple<int64_t, long, long, long> best{};
  std::vector<uint32_t> best_words;
  const size_t n_h = words_h.size(), n_r = words_r.size();
  for (size_t start_h = 0; start_h < n_h; ++start_h) {
    for (size_t start_r = 0; start_r < n_r; ++start_r) {
      if (std::labs(static_cast<long>(start_r) - static_cast<long>(start_h)) > kMaxShiftDist) continue;
      size_t length = 0;
      while (words_h[start_h + length] == words_r[start_r + length] && length < kMaxShiftSize) {
        ++length;
        // --- body of the consumer loop for the pair (start_h, start_r, length) ---
        bool skip = !any_error(hyp_err, start_h, length) || !any_error(ref_err, start_r, length) ||
                    (static_cast<long>(start_h) <= align[start_r] &&
                     align[start_r] < static_cast<long>(start_h + length));
        if (!skip) {
          long prev_idx = -1;
          for (long offset = -1; offset < static_cast<long>(length); ++offset) {
            long at = static_cast<long>(start_r) + offset;
            long idx;
            if (at == -1) {
              idx = 0;
            } else if (at < static_cast<long>(n_r)) {
              idx = align[at] + 1;
            } else {
              break;
            }
            if (idx == prev_idx) continue;
            prev_idx = idx;
            std::vector<uint32_t> shifted = perform_shift(words_h, start_h, length, static_cast<size_t>(idx));
            size_t shared = std::min(start_h, static_cast<size_t>(idx));
            std::tuple<int64_t, long, long, long> candidate{pre_score - ed.cost_from(shifted, shared),
                                                            static_cast<long>(length), -static_cast<long>(start_h),
                                                            -idx};
            ++checked;
            if (!have_best || candidate > best) {
              have_best = true;
              best = candidate;
              best_words = std::move(shifted);
            }
          }
          if (checked >= kMaxShiftCandidates) return have_best ? ShiftResult{std::get<0>(best), best_words}
                                                               : ShiftResult{0, words_h};
        }
        // --- end of body ---
        if (n_h == start_h + length || n_r == start_r + length) break;
      }
    }
  }
  if (!have_best) return ShiftResult{0, words_h};
  return ShiftResult{std::get<0>(best), best_words};
}

}  // namespace

std::pair<int64_t, int64_t> translation_edit_rate(const std::vector<uint32_t>& hyp,
                                                  const std::vector<uint32_t>& ref) {
  const auto n_ref = static_cast<int64_t>(ref.size());
  if (n_ref == 0) return {static_cast<int64_t>(hyp.size()), 0};
  BeamEditDistance ed(ref);
  int64_t shifts = 0;
  std::vector<uint32_t> input = hyp;
  int checked = 0;
  while (true) {
    ShiftResult r = best_shift(input, ref, ed, checked);
    if (checked >= kMaxShiftCandidates) break;
    if (r.delta <= 0) break;
    ++shifts;
    input = std::move(r.words);
  }
  std::string trace;
  int64_t distance = ed.full(input, trace);
  return {shifts + distance, n_ref};
}

}  // namespace tt::metrics
