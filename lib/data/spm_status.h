// SentencePiece status messages for users: "Internal: ./src/x.cc(660) [expr] Vocabulary size too high" is
// shortened to its human part ("Vocabulary size too high"). Private to lib/data.
#pragma once

#include <sentencepiece_processor.h>

#include <string>

namespace tt::data {

// The human-readable part of a failed status, or `fallback` when SentencePiece gave only a location.
inline std::string spm_status_message(const sentencepiece::util::Status& status, const std::string& fallback) {
  std::string text = status.error_message();
  // CHECK-style messages are "path(line) [expression] message".
  if (text.rfind("./src/", 0) == 0 || text.rfind("src/", 0) == 0) {
    size_t close = text.find("] ");
    text = close == std::string::npos ? std::string() : text.substr(close + 2);
    if (text.find_first_not_of(' ') == std::string::npos) text.clear();
  }
  return text.empty() ? fallback : text;
}

}  // namespace tt::data
