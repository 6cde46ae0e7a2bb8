#include "metrics/tercom_tokenizer.h"

#include "metrics/tokenizer.h"
#include "metrics/unicode_text.h"

namespace tt::metrics {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_period_comma(char c) { return c == '.' || c == ','; }
bool is_western_punct(unsigned char b) {
  // [{-~[-` -&(-+:-@/]
  return (b >= 0x7B && b <= 0x7E) || (b >= 0x5B && b <= 0x60) || (b >= 0x20 && b <= 0x26) ||
         (b >= 0x28 && b <= 0x2B) || (b >= 0x3A && b <= 0x40) || b == 0x2F;
}

// Two-character substitution "(A)(B)" applied left to right without overlaps, as re.sub does. All the
// patterns are ASCII apart from [^0-9], so bytes give the same matches as code points.
template <typename First, typename Second, typename Emit>
std::string substitute_pairs(const std::string& s, First first, Second second, Emit emit) {
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  for (size_t i = 0; i < s.size();) {
    if (i + 1 < s.size() && first(s[i]) && second(s[i + 1])) {
      emit(out, s[i], s[i + 1]);
      i += 2;
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

std::string normalize_general_and_western(std::string sent) {
  replace_all(sent, "\n-", "");
  replace_all(sent, "\n", " ");
  replace_all(sent, "&quot;", "\"");
  replace_all(sent, "&amp;", "&");
  replace_all(sent, "&lt;", "<");
  replace_all(sent, "&gt;", ">");
  sent.insert(sent.begin(), ' ');
  sent.push_back(' ');
  std::string s;
  s.reserve(sent.size() * 2);
  for (char c : sent) {
    if (is_western_punct(static_cast<unsigned char>(c))) {  // the class includes the space itself
      s.push_back(' ');
      s.push_back(c);
      s.push_back(' ');
    } else {
      s.push_back(c);
    }
  }
  replace_all(s, "'s ", " 's ");
  if (s.size() >= 2 && s.compare(s.size() - 2, 2, "'s") == 0) s.insert(s.end() - 2, ' ');
  auto not_digit = [](char c) { return !is_digit(c); };
  s = substitute_pairs(s, not_digit, is_period_comma, [](std::string& o, char a, char b) {
    o.push_back(a);
    o.push_back(' ');
    o.push_back(b);
    o.push_back(' ');
  });
  s = substitute_pairs(s, is_period_comma, not_digit, [](std::string& o, char a, char b) {
    o.push_back(' ');
    o.push_back(a);
    o.push_back(' ');
    o.push_back(b);
  });
  s = substitute_pairs(s, is_digit, [](char c) { return c == '-'; }, [](std::string& o, char a, char b) {
    o.push_back(a);
    o.push_back(' ');
    o.push_back(b);
    o.push_back(' ');
  });
  return s;
}

bool in(char32_t c, char32_t lo, char32_t hi) { return c >= lo && c <= hi; }

bool is_asian_punct(char32_t c) {
  return c == 0x3001 || c == 0x3002 || in(c, 0x3008, 0x3011) || in(c, 0x3014, 0x301F) || in(c, 0xFF61, 0xFF65) ||
         c == 0x30FB;
}

bool is_full_width_punct(char32_t c) {
  return c == 0xFF0E || c == 0xFF0C || c == 0xFF1F || c == 0xFF1A || c == 0xFF1B || c == 0xFF01 || c == 0xFF02 ||
         c == 0xFF08 || c == 0xFF09;
}

// The characters _normalize_asian surrounds with spaces. Its Hiragana/Katakana rules only match a
// string made entirely of kana, which the western step's padding rules out, and extra spaces vanish in
// the final whitespace normalisation, so one pass over the union of the sets is equivalent.
bool is_asian_split(char32_t c) {
  return in(c, 0x4E00, 0x9FFF) || in(c, 0x3400, 0x4DBF) || in(c, 0x31C0, 0x31EF) || in(c, 0x2E80, 0x2EFF) ||
         in(c, 0x3300, 0x33FF) || in(c, 0xF900, 0xFAFF) || in(c, 0xFE30, 0xFE4F) || in(c, 0x3200, 0x3F22) ||
         is_asian_punct(c) || is_full_width_punct(c);
}

}  // namespace

std::string tercom_tokenize(const TercomOptions& options, std::string_view sentence) {
  if (sentence.empty()) return "";
  std::string sent = options.case_sensitive ? std::string(sentence) : python_lower(sentence);
  if (options.normalized) {
    sent = normalize_general_and_western(std::move(sent));
    if (options.asian_support) {
      std::string out;
      out.reserve(sent.size() * 2);
      for (size_t i = 0; i < sent.size();) {
        size_t at = i;
        char32_t c = next_code_point(sent, i);
        bool split = c >= 0x2E80 && is_asian_split(c);
        if (split) out.push_back(' ');
        out.append(sent, at, i - at);
        if (split) out.push_back(' ');
      }
      sent.swap(out);
    }
  }
  if (options.no_punct) {
    std::string out;
    out.reserve(sent.size());
    for (size_t i = 0; i < sent.size();) {
      size_t at = i;
      char32_t c = next_code_point(sent, i);
      bool remove = c == '.' || c == ',' || c == '?' || c == ':' || c == ';' || c == '!' || c == '"' || c == '(' ||
                    c == ')';
      if (options.asian_support) remove = remove || is_asian_punct(c) || is_full_width_punct(c);
      if (!remove) out.append(sent, at, i - at);
    }
    sent.swap(out);
  }
  return normalize_whitespace(sent);
}

}  // namespace tt::metrics
