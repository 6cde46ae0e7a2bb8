// Token ids as the tools read and write them: one line of space-separated decimal ids.
#pragma once

#include <string>

namespace tt::test {

// "12 7 3" (no newline). Built by appending (GCC 12 warns falsely of an overlapping memcpy for
// `" " + std::to_string(id)`).
template <class Ids>
std::string ids_text(const Ids& ids) {
  std::string s;
  for (const auto id : ids) {
    if (!s.empty()) s += ' ';
    s += std::to_string(id);
  }
  return s;
}

}  // namespace tt::test
