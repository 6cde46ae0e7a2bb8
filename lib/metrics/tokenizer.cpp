#include "metrics/tokenizer.h"

#include "metrics/unicode_text.h"
#include "util/error.h"

namespace tt::metrics {

const std::vector<std::string>& tokenizer_names() {
  static const std::vector<std::string> names = {"13a", "intl", "zh", "char", "none"};
  return names;
}

Tokenizer parse_tokenizer(const std::string& name) {
  if (name == "13a") return Tokenizer::t13a;
  if (name == "intl") return Tokenizer::intl;
  if (name == "zh") return Tokenizer::zh;
  if (name == "char") return Tokenizer::character;
  if (name == "none") return Tokenizer::none;
  throw ConfigError("unknown tokenizer '" + name + "'; valid tokenizers are: 13a, intl, zh, char, none",
                    "ja-mecab, ko-mecab and spm are not supported by tt-bleu");
}

std::string tokenizer_name(Tokenizer tokenizer) {
  switch (tokenizer) {
    case Tokenizer::t13a: return "13a";
    case Tokenizer::intl: return "intl";
    case Tokenizer::zh: return "zh";
    case Tokenizer::character: return "char";
    case Tokenizer::none: return "none";
  }
  return "none";
}

std::string tokenize(Tokenizer tokenizer, std::string_view line, bool normalize) {
  switch (tokenizer) {
    case Tokenizer::t13a: return tokenize_13a(line, normalize);
    case Tokenizer::intl: return tokenize_intl(line, normalize);
    case Tokenizer::zh: return tokenize_zh(line, normalize);
    case Tokenizer::character: return tokenize_char(line);
    case Tokenizer::none: return std::string(line);
  }
  return std::string(line);
}

// " ".join(line): every code point, spaces included, separated by one space.
std::string tokenize_char(std::string_view line) {
  std::string out;
  out.reserve(line.size() * 2);
  for (size_t i = 0; i < line.size();) {
    size_t at = i;
    next_code_point(line, i);
    if (at) out.push_back(' ');
    out.append(line.substr(at, i - at));
  }
  return out;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  size_t pos = s.find(from);
  if (pos == std::string::npos) return;
  std::string out;
  out.reserve(s.size());
  size_t last = 0;
  while (pos != std::string::npos) {
    out.append(s, last, pos - last);
    out.append(to);
    last = pos + from.size();
    pos = s.find(from, last);
  }
  out.append(s, last, std::string::npos);
  s.swap(out);
}

}  // namespace tt::metrics
