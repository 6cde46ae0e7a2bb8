// Unicode helpers that reproduce Python 3's str semantics, because sacreBLEU is written in Python and its
// scores depend on them: str.split() (Python's whitespace set), str.lower() (full case mapping with the
// final-sigma rule), and code-point iteration. Categories come from utf8proc, not from our own tables.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tt::metrics {

// Decodes one code point at s[i] and advances i. Input must be valid UTF-8 (checked when files are read);
// a stray byte is returned as itself so that the function never loops forever.
char32_t next_code_point(std::string_view s, size_t& i);

// Appends the UTF-8 encoding of `c` to `out`.
void append_utf8(std::string& out, char32_t c);

// All code points of `s`.
std::vector<char32_t> to_code_points(std::string_view s);
std::string to_utf8(const std::vector<char32_t>& code_points);

// True for the characters Python's str.isspace() accepts (what str.split() splits on).
inline bool is_python_space(char32_t c) {
  if (c < 0x80) return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// Python's str.split() without arguments: pieces of `s` between runs of whitespace, no empty pieces.
// The views point into `s`.
std::vector<std::string_view> split_whitespace(std::string_view s);
// Same, appending to `out` (avoids an allocation per line in hot loops).
void split_whitespace(std::string_view s, std::vector<std::string_view>& out);

// Python's ' '.join(s.split()).
std::string normalize_whitespace(std::string_view s);

// Python's s.rstrip() and s.strip() (Unicode whitespace).
std::string_view rstrip(std::string_view s);
std::string_view strip(std::string_view s);

// Python's str.lower().
std::string python_lower(std::string_view s);

// Unicode general category groups (\p{N}, \p{P}, \p{S} of the `regex` module).
bool is_number(char32_t c);
bool is_punctuation(char32_t c);
bool is_symbol(char32_t c);

}  // namespace tt::metrics
