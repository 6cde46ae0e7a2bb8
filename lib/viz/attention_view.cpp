#include "viz/attention_view.h"

#include <algorithm>
#include <charconv>

#include "util/error.h"

namespace tt::viz {

namespace {

const std::string word_mark = "\xE2\x96\x81";  // U+2581, SentencePiece's word-start mark

int parse_int(const std::string& s, const std::string& spec, const std::string& what) {
  int v = -1;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 0)
    throw ConfigError(what + " '" + spec + "': '" + s + "' is not an index >= 0",
                      "write indices and ranges like 0,5 or 0-3");
  return v;
}

std::vector<int> check_range(const std::vector<int>& picked, int n, const std::string& what, const char* owner) {
  if (picked.empty()) {
    std::vector<int> all(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
    return all;
  }
  for (int i : picked)
    if (i >= n)
      throw ConfigError(what + ": " + std::to_string(i) + " does not exist; the model has " + std::to_string(n) +
                        " " + owner + " (0-" + std::to_string(n - 1) + ")");
  return picked;
}

}  // namespace

Reduce parse_reduce(const std::string& name) {
  if (name == "none") return Reduce::none;
  if (name == "mean") return Reduce::mean;
  if (name == "max") return Reduce::max;
  throw ConfigError("unknown head reduction '" + name + "'; expected none, mean or max");
}

const char* reduce_name(Reduce r) { return r == Reduce::mean ? "mean" : r == Reduce::max ? "max" : "none"; }

std::vector<int> parse_index_list(const std::string& spec, const std::string& what) {
  std::vector<int> out;
  size_t start = 0;
  while (start <= spec.size()) {
    const size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string item = spec.substr(start, comma - start);
    const size_t dash = item.find('-');
    if (dash == std::string::npos) {
      out.push_back(parse_int(item, spec, what));
    } else {
      const int a = parse_int(item.substr(0, dash), spec, what), b = parse_int(item.substr(dash + 1), spec, what);
      if (b < a) throw ConfigError(what + " '" + spec + "': range " + item + " runs backwards", "write it as " +
                                   std::to_string(b) + "-" + std::to_string(a));
      for (int i = a; i <= b; ++i) out.push_back(i);
    }
    start = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int> word_of_pieces(const Tokens& t) {
  std::vector<int> word(t.pieces.size());
  int w = -1;
  for (size_t i = 0; i < t.pieces.size(); ++i) {
    const bool special = i < t.special.size() && t.special[i];
    const bool after_special = i > 0 && i - 1 < t.special.size() && t.special[i - 1];
    if (w < 0 || special || after_special || t.pieces[i].rfind(word_mark, 0) == 0) ++w;
    word[i] = w;
  }
  return word;
}

std::vector<std::string> word_labels(const Tokens& t, const std::vector<int>& word_of) {
  std::vector<std::string> words(word_of.empty() ? 0 : static_cast<size_t>(word_of.back()) + 1);
  for (size_t i = 0; i < t.pieces.size(); ++i) {
    std::string& w = words[static_cast<size_t>(word_of[i])];
    w += w.empty() && t.pieces[i].rfind(word_mark, 0) == 0
             ? t.pieces[i].substr(word_mark.size())
             : t.pieces[i];
  }
  return words;
}

std::vector<float> merge_matrix(const float* m, int R, int C, const std::vector<int>& row_group, int Rw,
                                const std::vector<int>& col_group, int Cw) {
  std::vector<float> out(static_cast<size_t>(Rw) * Cw, 0.0f);
  std::vector<int> count(static_cast<size_t>(Rw), 0);
  for (int r = 0; r < R; ++r) {
    const int g = row_group[static_cast<size_t>(r)];
    ++count[static_cast<size_t>(g)];
    float* dst = out.data() + static_cast<size_t>(g) * Cw;
    for (int c = 0; c < C; ++c) dst[col_group[static_cast<size_t>(c)]] += m[static_cast<size_t>(r) * C + c];
  }
  for (int g = 0; g < Rw; ++g)
    for (int c = 0; c < Cw; ++c)
      if (count[static_cast<size_t>(g)] > 1) out[static_cast<size_t>(g) * Cw + c] /= static_cast<float>(count[static_cast<size_t>(g)]);
  return out;
}

AttentionView make_view(const SentenceAttention& a, const Tokens& src, const Tokens& tgt, const ViewOptions& o) {
  AttentionView v;
  v.reduce = o.reduce;
  v.heads = check_range(o.heads, a.heads, o.heads_name, "heads per layer");
  // Groups of pieces (identity without merge_words).
  std::vector<int> src_group(static_cast<size_t>(a.S())), tgt_group(static_cast<size_t>(a.T()));
  for (size_t i = 0; i < src_group.size(); ++i) src_group[i] = static_cast<int>(i);
  for (size_t i = 0; i < tgt_group.size(); ++i) tgt_group[i] = static_cast<int>(i);
  v.src_tokens = src.pieces;
  v.tgt_tokens = tgt.pieces;
  if (o.merge_words) {
    src_group = word_of_pieces(src);
    tgt_group = word_of_pieces(tgt);
    v.src_tokens = word_labels(src, src_group);
    v.tgt_tokens = word_labels(tgt, tgt_group);
  }
  const int Sw = static_cast<int>(v.src_tokens.size()), Tw = static_cast<int>(v.tgt_tokens.size());
  for (Kind kind : all_kinds) {
    if (!o.kinds.has(kind)) continue;
    if (a.maps(kind).size() != static_cast<size_t>(a.layers(kind)) * a.heads * a.rows(kind) * a.cols(kind))
      throw InternalError(std::string("make_view: ") + kind_name(kind) + " was not captured");
    MapSet m;
    m.kind = kind;
    m.layers = check_range(o.layers, a.layers(kind), o.layers_name,
                           kind == Kind::encoder_self ? "encoder layers" : "decoder layers");
    m.heads = o.reduce == Reduce::none ? static_cast<int>(v.heads.size()) : 1;
    const int R = a.rows(kind), C = a.cols(kind);
    const std::vector<int>& rg = kind == Kind::encoder_self ? src_group : tgt_group;
    const std::vector<int>& cg = kind == Kind::decoder_self ? tgt_group : src_group;
    m.rows = kind == Kind::encoder_self ? Sw : Tw;
    m.cols = kind == Kind::decoder_self ? Tw : Sw;
    std::vector<float> reduced(static_cast<size_t>(R) * C);
    for (int l : m.layers) {
      for (size_t hi = 0; hi < v.heads.size(); ++hi) {
        const float* h = a.maps(kind).data() + a.offset(kind, l, v.heads[hi]);
        if (o.reduce == Reduce::none) {
          const std::vector<float> merged = merge_matrix(h, R, C, rg, m.rows, cg, m.cols);
          m.data.insert(m.data.end(), merged.begin(), merged.end());
          continue;
        }
        for (size_t k = 0; k < reduced.size(); ++k) {
          if (o.reduce == Reduce::mean) reduced[k] = (hi ? reduced[k] : 0.0f) + h[k] / static_cast<float>(v.heads.size());
          else reduced[k] = hi ? std::max(reduced[k], h[k]) : h[k];
        }
      }
      if (o.reduce != Reduce::none) {
        const std::vector<float> merged = merge_matrix(reduced.data(), R, C, rg, m.rows, cg, m.cols);
        m.data.insert(m.data.end(), merged.begin(), merged.end());
      }
    }
    v.maps.push_back(std::move(m));
  }
  return v;
}

}  // namespace tt::viz
