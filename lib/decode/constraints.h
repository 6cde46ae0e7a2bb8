// Terminology constraints (tt-translate --constraints): every phrase of a sentence's glossary appears in
// each of its translations, as the same target pieces. The search is dynamic beam allocation (Post &
// Vilar 2018; the usual bookkeeping of Hu et al. 2019, here per sentence on the host):
//   - each open hypothesis offers its usual best tokens plus, for every phrase it has not yet met, the
//     token that would take that phrase one piece further (its first piece, or the next after the longest
//     partial match at the end of the hypothesis);
//   - a candidate's bank is the number of constraint pieces it has met (met phrases' lengths plus its
//     longest partial match), 0 .. C with C the pieces of all phrases together. The beam's k places are
//     shared equally between the C + 1 banks (the remainder to the highest), each bank takes its best
//     candidates, and places a bank cannot fill go to the next bank down that has candidates left, from the
//     highest; so hypotheses that have placed more of the terms are kept beside better-scoring ones that
//     have placed fewer, and none crowds the others out;
//   - </s> is allowed only once every phrase is met, and a candidate that could no longer fit its missing
//     pieces before the length limit is dropped.
// A phrase counts as met where it appears anywhere in the hypothesis (also inside another phrase); a
// phrase listed n times must appear n times, without overlapping itself.
#pragma once

#include <cstdint>
#include <vector>

#include "decode/search.h"
#include "decode/search_state.h"

namespace tt::decode {

// Constraints work with the beam search as it is: tt::ConfigError for sampling, a full beam or alternatives.
void check_constraint_options(const SearchOptions& o);

// Leaves out, last first, the phrases (and empty ones) that could not all fit: a hypothesis starting with
// `prefix` may hold `max_len` tokens. Returns the indices of the phrases left out, in the given order.
std::vector<size_t> fit_constraints(Constraints& phrases, const std::vector<int32_t>& prefix, int max_len);

namespace detail {

struct ConstraintState {
  int met = 0;                // constraint pieces met: the bank
  std::vector<int32_t> next;  // tokens that take an unmet phrase one piece further (sorted, unique)
  bool all_met() const { return next.empty(); }
};

class ConstraintTracker {
 public:
  explicit ConstraintTracker(const Constraints& phrases);
  int total() const { return total_; }  // C
  ConstraintState state(const std::vector<int32_t>& tokens) const;

 private:
  std::vector<std::vector<int32_t>> phrases_;  // distinct
  std::vector<int> wanted_;                    // how often each must appear
  int total_ = 0;
};

// The candidates of sentence s (which has constraints) that dynamic beam allocation keeps, best first.
std::vector<Candidate> choose_constrained(const Sentence& s, const RowBest& best_of, const SearchOptions& o,
                                          const SpecialIds& ids);

}  // namespace detail
}  // namespace tt::decode
