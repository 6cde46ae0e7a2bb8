// mteval-v14 "international" tokenization as sacreBLEU writes it with the `regex` module:
//   (\P{N})(\p{P}) -> "\1 \2 ";  (\p{P})(\P{N}) -> " \1 \2";  (\p{S}) -> " \1 "
// applied one after the other as leftmost, non-overlapping substitutions over code points.
#include "metrics/tokenizer.h"
#include "metrics/unicode_text.h"

namespace tt::metrics {

std::string tokenize_intl(std::string_view line, bool normalize) {
  std::vector<char32_t> c = to_code_points(line);
  const char32_t space = U' ';
  std::vector<char32_t> a;
  a.reserve(c.size() * 2);
  for (size_t i = 0; i < c.size();) {
    if (i + 1 < c.size() && !is_number(c[i]) && is_punctuation(c[i + 1])) {
      a.insert(a.end(), {c[i], space, c[i + 1], space});
      i += 2;
    } else {
      a.push_back(c[i++]);
    }
  }
  std::vector<char32_t> b;
  b.reserve(a.size() + a.size() / 4);
  for (size_t i = 0; i < a.size();) {
    if (i + 1 < a.size() && is_punctuation(a[i]) && !is_number(a[i + 1])) {
      b.insert(b.end(), {space, a[i], space, a[i + 1]});
      i += 2;
    } else {
      b.push_back(a[i++]);
    }
  }
  std::string out;
  out.reserve(b.size() * 2);
  for (char32_t ch : b) {
    if (is_symbol(ch)) {
      out.push_back(' ');
      append_utf8(out, ch);
      out.push_back(' ');
    } else {
      append_utf8(out, ch);
    }
  }
  return normalize ? normalize_whitespace(out) : out;
}

}  // namespace tt::metrics
