// sacreBLEU's `zh` tokenizer: strip, put spaces around every "Chinese" character, then the 13a regular
// expressions (without 13a's XML unescaping and padding).
#include "metrics/tokenizer.h"
#include "metrics/unicode_text.h"

namespace tt::metrics {

// sacreBLEU's _UCODE_RANGES as its Python string comparisons actually evaluate them. Two entries there
// are written '\u20000'..'\u2a6d6' and '\u2f800'..'\u2fa1d' (five hex digits after \u), which Python reads
// as two-character strings; single characters compare inside them as U+2001..U+2A6D and U+2F81..U+2FA1.
// So sacreBLEU also splits off general punctuation such as U+2019 and U+201C, and we must too.
// (Ranges merged and checked against TokenizerZh._is_chinese_char over all code points.)
static bool is_chinese_char(char32_t c) {
  static constexpr char32_t ranges[][2] = {
      {0x2001, 0x2A6D}, {0x2E80, 0x2FDF}, {0x2FF0, 0x303F}, {0x3100, 0x312F}, {0x31A0, 0x31EF},
      {0x3200, 0x4DB5}, {0x4E00, 0x9FBB}, {0xF900, 0xFA2D}, {0xFA30, 0xFA6A}, {0xFA70, 0xFAD9},
      {0xFE10, 0xFE1F}, {0xFE30, 0xFE4F}, {0xFF00, 0xFFEF}};
  if (c < 0x2001) return false;
  for (const auto& r : ranges) {
    if (c >= r[0] && c <= r[1]) return true;
  }
  return false;
}

std::string tokenize_zh(std::string_view line, bool normalize) {
  std::string_view s = strip(line);
  std::string spaced;
  spaced.reserve(s.size() * 2);
  for (size_t i = 0; i < s.size();) {
    size_t at = i;
    char32_t c = next_code_point(s, i);
    if (is_chinese_char(c)) {
      spaced.push_back(' ');
      spaced.append(s.substr(at, i - at));
      spaced.push_back(' ');
    } else {
      spaced.append(s.substr(at, i - at));
    }
  }
  return mteval_post_tokenize(spaced, normalize);
}

}  // namespace tt::metrics
