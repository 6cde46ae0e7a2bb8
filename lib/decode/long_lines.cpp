#include "decode/long_lines.h"

#include <algorithm>

#include "util/error.h"

namespace tt::decode {

namespace {

bool starts_with(const std::string& s, size_t at, const char* what) { return s.compare(at, std::char_traits<char>::length(what), what) == 0; }

// The length of the sentence end at `at` ('.', '!', '?', or the UTF-8 of '…', '。', '！', '？'), 0 if none.
size_t sentence_end(const std::string& s, size_t at) {
  const char c = s[at];
  if (c == '.' || c == '!' || c == '?') return 1;
  for (const char* mark : {"\u2026", "\u3002", "\uff01", "\uff1f"})
    if (starts_with(s, at, mark)) return std::char_traits<char>::length(mark);
  return 0;
}

// The length of a closing quote or bracket at `at`, 0 if none.
size_t closing(const std::string& s, size_t at) {
  const char c = s[at];
  if (c == '"' || c == '\'' || c == ')' || c == ']' || c == '}') return 1;
  for (const char* mark : {"\u201d", "\u2019", "\u00bb", "\u300d", "\u300f", "\uff09"})
    if (starts_with(s, at, mark)) return std::char_traits<char>::length(mark);
  return 0;
}

bool space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

}  // namespace

std::vector<std::string> split_sentences(const std::string& line) {
  std::vector<std::string> sentences;
  size_t begin = 0, at = 0;
  while (at < line.size()) {
    size_t n = sentence_end(line, at);
    if (n == 0) {
      ++at;
      continue;
    }
    size_t end = at + n;
    while (end < line.size()) {  // "?!", "...", closing quotes
      const size_t more = sentence_end(line, end) + closing(line, end);
      if (more == 0) break;
      end += more;
    }
    if (end < line.size() && space(line[end])) {
      while (end < line.size() && space(line[end])) ++end;
      if (end < line.size()) {
        sentences.push_back(line.substr(begin, end - begin));
        begin = end;
      }
    }
    at = end;
  }
  if (begin < line.size() || sentences.empty()) sentences.push_back(line.substr(begin));
  return sentences;
}

std::vector<std::vector<int32_t>> pack_parts(const std::vector<std::vector<int32_t>>& sentences, int limit,
                                             const std::function<bool(int32_t)>& starts_word) {
  if (limit < 1) throw InternalError("pack_parts: limit must be at least 1");
  const size_t L = static_cast<size_t>(limit);
  std::vector<std::vector<int32_t>> parts;
  for (const auto& sentence : sentences) {
    auto piece = [&](size_t i) { return sentence.begin() + static_cast<std::ptrdiff_t>(i); };
    size_t at = 0;
    while (sentence.size() - at > L) {  // cut before the last word start that keeps the part within L
      size_t cut = at + L;
      while (cut > at && !starts_word(sentence[cut])) --cut;
      if (cut == at) cut = at + L;  // one word longer than L
      parts.emplace_back(piece(at), piece(cut));
      at = cut;
    }
    if (at < sentence.size()) parts.emplace_back(piece(at), sentence.end());
  }
  return parts;
}

std::vector<Hypothesis> join_parts(const std::vector<std::vector<Hypothesis>>& parts,
                                   const std::vector<std::vector<int32_t>>& sources, bool attention) {
  if (parts.empty() || parts.size() != sources.size()) throw InternalError("join_parts: parts and sources differ");
  size_t n = 0, S = 1;
  for (size_t p = 0; p < parts.size(); ++p) {
    if (parts[p].empty() || sources[p].empty()) throw InternalError("join_parts: a part without a hypothesis");
    n = std::max(n, parts[p].size());
    S += sources[p].size() - 1;
  }
  std::vector<Hypothesis> joined(n);
  for (size_t k = 0; k < n; ++k) {
    Hypothesis& j = joined[k];
    for (const auto& part : parts) {
      const Hypothesis& h = part[std::min(k, part.size() - 1)];
      j.tokens.insert(j.tokens.end(), h.tokens.begin(), h.tokens.end());
      j.score += h.score;
      j.log_prob += h.log_prob;
    }
    if (!attention) continue;
    const size_t T = j.tokens.size() + 1;
    j.attention.assign(T * S, 0.0f);
    size_t row = 0, col = 0;
    for (size_t p = 0; p < parts.size(); ++p) {
      const Hypothesis& h = parts[p][std::min(k, parts[p].size() - 1)];
      const size_t Sp = sources[p].size(), rows = h.tokens.size() + (p + 1 == parts.size() ? 1 : 0);
      if (h.attention.size() != (h.tokens.size() + 1) * Sp) continue;  // (a failed part has none)
      for (size_t r = 0; r < rows; ++r) {
        const float* from = h.attention.data() + r * Sp;
        float* to = j.attention.data() + (row + r) * S;
        std::copy(from, from + Sp - 1, to + col);
        if (p + 1 == parts.size()) to[S - 1] = from[Sp - 1];
      }
      row += h.tokens.size();
      col += Sp - 1;
    }
  }
  return joined;
}

}  // namespace tt::decode

