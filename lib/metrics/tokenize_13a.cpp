// 13a (mteval-v13a.pl) as sacreBLEU implements it with Python regular expressions. Every pattern is
// ASCII apart from [^0-9], so the passes run on bytes: a multi-byte character can neither start nor end
// differently than the code point it encodes, so leftmost non-overlapping matches fall in the same places.
#include "metrics/tokenizer.h"
#include "metrics/unicode_text.h"

namespace tt::metrics {

static bool is_13a_punct(unsigned char b) {
  // [\{-\~\[-\` -\&\(-\+\:-\@\/]
  return (b >= 0x7B && b <= 0x7E) || (b >= 0x5B && b <= 0x60) || (b >= 0x20 && b <= 0x26) ||
         (b >= 0x28 && b <= 0x2B) || (b >= 0x3A && b <= 0x40) || b == 0x2F;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_period_comma(char c) { return c == '.' || c == ','; }

// Each pass writes into a buffer sized for its worst case (every character expanded), through a raw
// pointer: this is the hot loop of BLEU scoring.
std::string mteval_post_tokenize(std::string_view line, bool normalize) {
  std::string a(line.size() * 3, '\0');
  char* p = a.data();
  bool has_period_comma = false, has_dash = false;
  for (char c : line) {
    if (is_13a_punct(static_cast<unsigned char>(c))) {
      *p++ = ' ';
      *p++ = c;
      *p++ = ' ';
    } else {
      has_period_comma = has_period_comma || is_period_comma(c);
      has_dash = has_dash || c == '-';
      *p++ = c;
    }
  }
  a.resize(static_cast<size_t>(p - a.data()));
  // The three pair substitutions copy the long stretches between candidate positions in bulk.
  std::string b;
  auto next_period_comma = [](const std::string& s, size_t from) {
    while (from < s.size() && !is_period_comma(s[from])) ++from;
    return from;
  };
  if (has_period_comma) {
    // ([^0-9])([\.,]) -> "\1 \2 ": a match starts just before a period or comma
    b.clear();
    b.reserve(a.size() * 2);
    for (size_t i = 0; i < a.size();) {
      size_t j = next_period_comma(a, i + 1);
      if (j >= a.size()) {
        b.append(a, i, std::string::npos);
        break;
      }
      b.append(a, i, j - 1 - i);
      i = j - 1;
      if (!is_digit(a[i])) {
        b.push_back(a[i]);
        b.push_back(' ');
        b.push_back(a[j]);
        b.push_back(' ');
        i += 2;
      } else {
        b.push_back(a[i++]);
      }
    }
    // ([\.,])([^0-9]) -> " \1 \2": a match starts at a period or comma
    a.clear();
    a.reserve(b.size() * 2);
    for (size_t i = 0; i < b.size();) {
      size_t j = next_period_comma(b, i);
      a.append(b, i, j - i);
      if (j >= b.size()) break;
      if (j + 1 < b.size() && !is_digit(b[j + 1])) {
        a.push_back(' ');
        a.push_back(b[j]);
        a.push_back(' ');
        a.push_back(b[j + 1]);
        i = j + 2;
      } else {
        a.push_back(b[j]);
        i = j + 1;
      }
    }
  }
  if (has_dash) {
    // ([0-9])(-) -> "\1 \2 "
    b.clear();
    b.reserve(a.size() * 2);
    for (size_t i = 0; i < a.size();) {
      size_t j = a.find('-', i + 1);
      if (j == std::string::npos) {
        b.append(a, i, std::string::npos);
        break;
      }
      b.append(a, i, j - 1 - i);
      i = j - 1;
      if (is_digit(a[i])) {
        b.push_back(a[i]);
        b.push_back(' ');
        b.push_back('-');
        b.push_back(' ');
        i += 2;
      } else {
        b.push_back(a[i++]);
      }
    }
    a.swap(b);
  }
  return normalize ? normalize_whitespace(a) : a;
}

std::string tokenize_13a(std::string_view line, bool normalize) {
  std::string s(line);
  replace_all(s, "<skipped>", "");
  replace_all(s, "-\n", "");
  replace_all(s, "\n", " ");
  if (s.find('&') != std::string::npos) {
    replace_all(s, "&quot;", "\"");
    replace_all(s, "&amp;", "&");
    replace_all(s, "&lt;", "<");
    replace_all(s, "&gt;", ">");
  }
  std::string padded;
  padded.reserve(s.size() + 2);
  padded.push_back(' ');
  padded.append(s);
  padded.push_back(' ');
  return mteval_post_tokenize(padded, normalize);
}

}  // namespace tt::metrics
