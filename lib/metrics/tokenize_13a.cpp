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
  std::string b;
  if (has_period_comma) {
    // ([^0-9])([\.,]) -> "\1 \2 "
    b.assign(a.size() * 2, '\0');
    p = b.data();
    for (size_t i = 0; i < a.size();) {
      if (i + 1 < a.size() && !is_digit(a[i]) && is_period_comma(a[i + 1])) {
        *p++ = a[i];
        *p++ = ' ';
        *p++ = a[i + 1];
        *p++ = ' ';
        i += 2;
      } else {
        *p++ = a[i++];
      }
    }
    b.resize(static_cast<size_t>(p - b.data()));
    // ([\.,])([^0-9]) -> " \1 \2"
    a.assign(b.size() * 2, '\0');
    p = a.data();
    for (size_t i = 0; i < b.size();) {
      if (i + 1 < b.size() && is_period_comma(b[i]) && !is_digit(b[i + 1])) {
        *p++ = ' ';
        *p++ = b[i];
        *p++ = ' ';
        *p++ = b[i + 1];
        i += 2;
      } else {
        *p++ = b[i++];
      }
    }
    a.resize(static_cast<size_t>(p - a.data()));
  }
  if (has_dash) {
    // ([0-9])(-) -> "\1 \2 "
    b.assign(a.size() * 2, '\0');
    p = b.data();
    for (size_t i = 0; i < a.size();) {
      if (i + 1 < a.size() && is_digit(a[i]) && a[i + 1] == '-') {
        *p++ = a[i];
        *p++ = ' ';
        *p++ = '-';
        *p++ = ' ';
        i += 2;
      } else {
        *p++ = a[i++];
      }
    }
    b.resize(static_cast<size_t>(p - b.data()));
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
