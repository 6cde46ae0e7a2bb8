#include "metrics/unicode_text.h"

#include <utf8proc.h>

namespace tt::metrics {

char32_t next_code_point(std::string_view s, size_t& i) {
  auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) {
    ++i;
    return b;
  }
  int n = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
  if (n == 1 || i + n > s.size()) {
    ++i;
    return b;
  }
  char32_t c = b & (0x3F >> (n - 1));
  for (int k = 1; k < n; ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += n;
  return c;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::vector<char32_t> to_code_points(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) out.push_back(next_code_point(s, i));
  return out;
}

std::string to_utf8(const std::vector<char32_t>& code_points) {
  std::string out;
  out.reserve(code_points.size());
  for (char32_t c : code_points) append_utf8(out, c);
  return out;
}

void split_whitespace(std::string_view s, std::vector<std::string_view>& out) {
  size_t start = 0;
  bool in_word = false;
  for (size_t i = 0; i < s.size();) {
    size_t at = i;
    char32_t c;
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      c = static_cast<unsigned char>(s[i]);
      ++i;
    } else {
      c = next_code_point(s, i);
    }
    if (is_python_space(c)) {
      if (in_word) out.push_back(s.substr(start, at - start));
      in_word = false;
    } else if (!in_word) {
      in_word = true;
      start = at;
    }
  }
  if (in_word) out.push_back(s.substr(start));
}

std::vector<std::string_view> split_whitespace(std::string_view s) {
  std::vector<std::string_view> out;
  split_whitespace(s, out);
  return out;
}

std::string normalize_whitespace(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    // skip a run of whitespace
    while (i < n) {
      auto b = static_cast<unsigned char>(s[i]);
      if (b < 0x80) {
        if (!is_python_space(b)) break;
        ++i;
      } else {
        size_t next = i;
        if (!is_python_space(next_code_point(s, next))) break;
        i = next;
      }
    }
    if (i >= n) break;
    // copy a run of non-whitespace in one append
    size_t start = i;
    while (i < n) {
      auto b = static_cast<unsigned char>(s[i]);
      if (b < 0x80) {
        if (is_python_space(b)) break;
        ++i;
      } else {
        size_t next = i;
        if (is_python_space(next_code_point(s, next))) break;
        i = next;
      }
    }
    if (!out.empty()) out.push_back(' ');
    out.append(s.data() + start, i - start);
  }
  return out;
}

// Byte offset where the trailing whitespace of `s` begins.
static size_t trailing_space_start(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    size_t begin = end - 1;
    while (begin > 0 && (static_cast<unsigned char>(s[begin]) & 0xC0) == 0x80) --begin;
    size_t i = begin;
    if (!is_python_space(next_code_point(s, i))) break;
    end = begin;
  }
  return end;
}

std::string_view rstrip(std::string_view s) { return s.substr(0, trailing_space_start(s)); }

std::string_view strip(std::string_view s) {
  s = rstrip(s);
  size_t i = 0;
  while (i < s.size()) {
    size_t at = i;
    if (!is_python_space(next_code_point(s, i))) return s.substr(at);
  }
  return s.substr(s.size());
}

// Python's Cased and Case_Ignorable properties (used only by the final-sigma rule), approximated from
// the general category plus the few Word_Break=MidLetter/MidNumLet/Single_Quote characters.
static bool is_cased(char32_t c) {
  auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  if (cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT) return true;
  auto ci = static_cast<utf8proc_int32_t>(c);
  return utf8proc_tolower(ci) != ci || utf8proc_toupper(ci) != ci;
}

static bool is_case_ignorable(char32_t c) {
  switch (c) {
    case 0x27: case 0x2E: case 0x3A: case 0x5E: case 0x60: case 0xA8: case 0xAD: case 0xAF: case 0xB4:
    case 0xB7: case 0xB8: case 0x387: case 0x55F: case 0x5F4: case 0x2018: case 0x2019: case 0x2024:
    case 0x2027: case 0xFE13: case 0xFE52: case 0xFE55: case 0xFF07: case 0xFF0E: case 0xFF1A:
      return true;
    default:
      break;
  }
  auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat == UTF8PROC_CATEGORY_MN || cat == UTF8PROC_CATEGORY_ME || cat == UTF8PROC_CATEGORY_CF ||
         cat == UTF8PROC_CATEGORY_LM || cat == UTF8PROC_CATEGORY_SK;
}

std::string python_lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool ascii = true;
  for (char ch : s) {
    if (static_cast<unsigned char>(ch) >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) {
    for (char ch : s) out.push_back(ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch + 32) : ch);
    return out;
  }
  std::vector<char32_t> cps = to_code_points(s);
  for (size_t k = 0; k < cps.size(); ++k) {
    char32_t c = cps[k];
    if (c == 0x130) {  // the one unconditional multi-character lowercase mapping (SpecialCasing.txt)
      out.append("i\xCC\x87");
    } else if (c == 0x3A3) {  // Final_Sigma: \p{cased}\p{case-ignorable}* Σ !(\p{case-ignorable}* \p{cased})
      size_t j = k;
      while (j > 0 && is_case_ignorable(cps[j - 1])) --j;
      bool final_sigma = j > 0 && is_cased(cps[j - 1]);
      if (final_sigma) {
        size_t m = k + 1;
        while (m < cps.size() && is_case_ignorable(cps[m])) ++m;
        final_sigma = m == cps.size() || !is_cased(cps[m]);
      }
      append_utf8(out, final_sigma ? 0x3C2 : 0x3C3);
    } else {
      append_utf8(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
    }
  }
  return out;
}

bool is_number(char32_t c) {
  auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat == UTF8PROC_CATEGORY_ND || cat == UTF8PROC_CATEGORY_NL || cat == UTF8PROC_CATEGORY_NO;
}

bool is_punctuation(char32_t c) {
  auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO;
}

bool is_symbol(char32_t c) {
  auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat >= UTF8PROC_CATEGORY_SM && cat <= UTF8PROC_CATEGORY_SO;
}

}  // namespace tt::metrics
