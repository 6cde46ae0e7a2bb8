// sacreBLEU's lib_ter: tercom-style TER with greedy block shifts and a beam-limited edit distance,
// ported step by step (candidate order, tie-breaking, the shift and candidate limits) so that edit
// counts are identical. Words are per-segment integer ids.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace tt::metrics {

// (number of edits, reference length) for one hypothesis against one reference.
std::pair<int64_t, int64_t> translation_edit_rate(const std::vector<uint32_t>& hyp,
                                                  const std::vector<uint32_t>& ref);

}  // namespace tt::metrics
