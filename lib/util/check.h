// TT_CHECK: internal invariants, reported with file:line. Never for user input (throw tt::Error there).
#pragma once

#include <sstream>
#include <string>

#include "util/error.h"

namespace tt::detail {
[[noreturn]] inline void check_failed(const char* expr, const char* file, int line, const std::string& msg) {
  std::ostringstream os;
  os << file << ":" << line << ": internal check failed: " << expr;
  if (!msg.empty()) os << " (" << msg << ")";
  throw InternalError(os.str());
}
}  // namespace tt::detail

#define TT_CHECK(cond)                                                           \
  do {                                                                           \
    if (!(cond)) ::tt::detail::check_failed(#cond, __FILE__, __LINE__, {});      \
  } while (0)

#define TT_CHECK_MSG(cond, msg)                                                  \
  do {                                                                           \
    if (!(cond)) ::tt::detail::check_failed(#cond, __FILE__, __LINE__, (msg));   \
  } while (0)
