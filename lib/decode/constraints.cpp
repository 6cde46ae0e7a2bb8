#include "decode/constraints.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/error.h"

namespace tt::decode {

namespace detail {

ConstraintTracker::ConstraintTracker(const Constraints& phrases) {
  for (const auto& p : phrases) {
    if (p.empty()) continue;
    total_ += static_cast<int>(p.size());
    auto at = std::find(phrases_.begin(), phrases_.end(), p);
    if (at == phrases_.end()) {
      phrases_.push_back(p);
      wanted_.push_back(1);
    } else {
      ++wanted_[static_cast<size_t>(at - phrases_.begin())];
    }
  }
}

ConstraintState ConstraintTracker::state(const std::vector<int32_t>& tokens) const {
  ConstraintState st;
  int progress = 0;  // the longest partial match of an unmet phrase at the end
  const size_t L = tokens.size();
  for (size_t i = 0; i < phrases_.size(); ++i) {
    const auto& q = phrases_[i];
    const size_t n = q.size();
    int found = 0;  // non-overlapping occurrences, leftmost first
    for (size_t at = 0; at + n <= L && found < wanted_[i];)
      if (std::equal(q.begin(), q.end(), tokens.begin() + static_cast<std::ptrdiff_t>(at))) {
        ++found;
        at += n;
      } else {
        ++at;
      }
    st.met += found * static_cast<int>(n);
    if (found == wanted_[i]) continue;
    size_t j = std::min(n - 1, L);  // the longest proper prefix of q that ends the hypothesis
    while (j > 0 && !std::equal(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(j),
                                tokens.end() - static_cast<std::ptrdiff_t>(j)))
      --j;
    progress = std::max(progress, static_cast<int>(j));
    st.next.push_back(q[j]);
  }
  st.met += progress;
  std::sort(st.next.begin(), st.next.end());
  st.next.erase(std::unique(st.next.begin(), st.next.end()), st.next.end());
  return st;
}

std::vector<Candidate> choose_constrained(const Sentence& s, const RowBest& best_of, const SearchOptions& o,
                                          const SpecialIds& ids) {
  const ConstraintTracker& tracker = *s.constraints;
  const int C = tracker.total(), k = o.beam - static_cast<int>(s.finished.size());
  const int length = static_cast<int>(s.open.front().tokens.size());
  const bool eos_length = length >= std::min(o.min_len, s.max_len), others_allowed = length < s.max_len;
  struct Banked {
    Candidate c;
    int bank;
  };
  std::vector<Banked> all;
  std::vector<int32_t> child, offered;
  for (int j = 0; j < static_cast<int>(s.open.size()); ++j) {
    const Open& h = s.open[static_cast<size_t>(j)];
    const auto& required = best_of.required[static_cast<size_t>(h.row)];  // empty: every phrase met
    offered.clear();
    auto offer = [&](int32_t v, float lp) {
      if (std::isnan(lp) || lp == -std::numeric_limits<float>::infinity()) return;
      if (std::find(offered.begin(), offered.end(), v) != offered.end()) return;
      offered.push_back(v);
      if (v == ids.eos) {
        if (eos_length && required.empty()) all.push_back({Candidate{h.log_prob + lp, lp, j, v}, C});
        return;
      }
      if (!others_allowed) return;
      child = h.tokens;
      child.push_back(v);
      const ConstraintState next = tracker.state(child);
      if (length + 1 + (C - next.met) > s.max_len) return;  // its missing pieces would no longer fit
      all.push_back({Candidate{h.log_prob + lp, lp, j, v}, next.met});
    };
    offer(ids.eos, best_of.eos[static_cast<size_t>(h.row)]);
    // The term's pieces first: a required token is offered even where a ban would pass it over.
    for (const auto& [v, lp] : required) offer(v, lp);
    const size_t first = static_cast<size_t>(h.row) * static_cast<size_t>(best_of.width);
    for (size_t i = first; i < first + static_cast<size_t>(best_of.width); ++i) {
      const int32_t v = best_of.tokens[i];
      if (v == ids.bos || v == ids.pad || v == ids.eos) continue;
      if ((o.ban_unk && v == ids.unk) || best_of.is_banned(h.row, v)) continue;
      offer(v, best_of.values[i]);
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const Banked& a, const Banked& b) { return a.c.better_than(b.c); });
  // The banks' places: k shared equally, the remainder to the highest bank; what a bank cannot fill goes,
  // from the highest bank down, to banks with candidates left.
  const int banks = C + 1;
  std::vector<int> count(static_cast<size_t>(banks), 0), places(static_cast<size_t>(banks), k / banks);
  for (const Banked& b : all) ++count[static_cast<size_t>(b.bank)];
  places.back() += k % banks;
  int spare = 0;
  for (int b = 0; b < banks; ++b) {
    const int over = places[static_cast<size_t>(b)] - count[static_cast<size_t>(b)];
    if (over > 0) {
      spare += over;
      places[static_cast<size_t>(b)] = count[static_cast<size_t>(b)];
    }
  }
  for (int b = banks - 1; b >= 0 && spare > 0; --b) {
    const int more = std::min(spare, count[static_cast<size_t>(b)] - places[static_cast<size_t>(b)]);
    places[static_cast<size_t>(b)] += more;
    spare -= more;
  }
  std::vector<Candidate> chosen;
  for (const Banked& b : all)
    if (places[static_cast<size_t>(b.bank)] > 0) {
      --places[static_cast<size_t>(b.bank)];
      chosen.push_back(b.c);
    }
  return chosen;
}

}  // namespace detail

void check_constraint_options(const SearchOptions& o) {
  if (o.sampling || o.full_beam || o.alternatives > 0)
    throw ConfigError("terminology constraints work with the beam search as it is: not with sampling, a full beam "
                      "or alternatives");
}

std::vector<size_t> fit_constraints(Constraints& phrases, const std::vector<int32_t>& prefix, int max_len) {
  std::vector<size_t> dropped;
  std::vector<size_t> kept;
  for (size_t i = 0; i < phrases.size(); ++i) (phrases[i].empty() ? dropped : kept).push_back(i);
  auto fits = [&] {
    Constraints some;
    for (size_t i : kept) some.push_back(phrases[i]);
    const detail::ConstraintTracker tracker(some);
    const detail::ConstraintState st = tracker.state(prefix);
    return static_cast<int>(prefix.size()) + (tracker.total() - st.met) <= max_len;
  };
  while (!kept.empty() && !fits()) {
    dropped.push_back(kept.back());
    kept.pop_back();
  }
  std::sort(dropped.begin(), dropped.end());
  Constraints out;
  for (size_t i : kept) out.push_back(std::move(phrases[i]));
  phrases = std::move(out);
  return dropped;
}

}  // namespace tt::decode
