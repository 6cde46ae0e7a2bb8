#include "data/spm_ids.h"

#include <charconv>
#include <cstdio>

#include "util/error.h"

namespace tt::data {

std::vector<std::string> split_tokens(std::string_view line) {
  std::vector<std::string> tokens;
  size_t start = 0;
  while (start <= line.size()) {
    size_t end = line.find(' ', start);
    if (end == std::string_view::npos) end = line.size();
    if (end > start) tokens.emplace_back(line.substr(start, end - start));
    start = end + 1;
  }
  return tokens;
}

void parse_id_line(std::string_view line, std::vector<int>& ids) {
  ids.clear();
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t start = 0;
  while (start <= line.size()) {
    size_t end = line.find(' ', start);
    if (end == std::string_view::npos) end = line.size();
    if (end > start) {
      const std::string_view token = line.substr(start, end - start);
      int value = 0;
      auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
      if (ec != std::errc() || ptr != token.data() + token.size()) {
        throw FormatError("'" + visible_text(token) + "' is not an id",
                          "decode " + option_ref("format") + " id reads space-separated integers; use " +
                              option_ref("format") + " piece for pieces");
      }
      ids.push_back(value);
    }
    start = end + 1;
  }
}

std::string visible_text(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace tt::data
