// A vocabulary shortlist file as tt-translate --shortlist reads it. The answer is a shortlist whose every
// batch's columns are ascending target ids in range, with a valid sample, or a tt::Error; never a crash
// or another exception.
#include <algorithm>
#include <cstdint>

#include "decode/shortlist.h"
#include "fuzz_support.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = tt::fuzz::input_file(data, size);
  try {
    const tt::decode::Shortlist s = tt::decode::Shortlist::load(path);
    const int VT = s.target_vocab();
    std::vector<int32_t> order = s.by_frequency();
    std::sort(order.begin(), order.end());
    for (int i = 0; i < VT; ++i)
      if (order[static_cast<size_t>(i)] != i) __builtin_trap();
    for (const auto& sources : {std::vector<std::vector<int32_t>>{{0, 1, 2}}, {{-1, 5, 1 << 30}, {3}}}) {
      const auto c = s.columns(sources, {0, VT - 1});
      if (c.ids.empty() || !std::is_sorted(c.ids.begin(), c.ids.end())) __builtin_trap();
      if (std::adjacent_find(c.ids.begin(), c.ids.end()) != c.ids.end()) __builtin_trap();
      if (c.ids.front() < 0 || c.ids.back() >= VT) __builtin_trap();
      for (int32_t col : c.sample)
        if (col < 0 || col >= static_cast<int32_t>(c.ids.size())) __builtin_trap();
    }
  } catch (const tt::Error&) {
  }
  return 0;
}
