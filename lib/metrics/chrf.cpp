#include "metrics/chrf.h"

#include <algorithm>

#include "metrics/ngram_counts.h"
#include "metrics/ngram_table.h"
#include "metrics/unicode_text.h"
#include "util/error.h"

namespace tt::metrics {

Chrf::Chrf(ChrfOptions options) : options_(options) {
  // sacreBLEU scores orders 0 .. char_order + word_order - 1 of its statistics and extracts word n-grams
  // only for word_order > 0, so a negative word order drops that many of the highest character orders
  // (sacreBLEU -cw -1 is chrF over character 1..5-grams, still labelled nc:6|nw:-1).
  char_order_ = options_.word_order < 0 ? options_.char_order + options_.word_order : options_.char_order;
  word_order_ = std::max(options_.word_order, 0);
  if (options_.char_order < 0 || char_order_ + word_order_ <= 0) {
    throw ConfigError("chrF needs char order + word order >= 1 and a char order >= 0, got " +
                      std::to_string(options_.char_order) + " and " + std::to_string(options_.word_order));
  }
}

std::string Chrf::name() const { return "chrF" + std::to_string(options_.beta) + std::string(static_cast<size_t>(word_order_), '+'); }

namespace {

bool is_ascii_punct(std::string_view w, size_t i) {
  // string.punctuation; a multi-byte character never matches, as in Python.
  unsigned char c = static_cast<unsigned char>(w[i]);
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
         (c >= 0x7B && c <= 0x7E);
}

bool is_single_code_point(std::string_view w) {
  size_t i = 0;
  next_code_point(w, i);
  return i == w.size();
}

// sacreBLEU's CHRF._remove_punctuation: one trailing or else one leading ASCII punctuation mark is split
// off words longer than one character.
void split_words(std::string_view sent, std::vector<std::string_view>& out) {
  std::vector<std::string_view> words;
  split_whitespace(sent, words);
  for (auto w : words) {
    if (is_single_code_point(w)) {
      out.push_back(w);
    } else if (is_ascii_punct(w, w.size() - 1)) {
      out.push_back(w.substr(0, w.size() - 1));
      out.push_back(w.substr(w.size() - 1));
    } else if (is_ascii_punct(w, 0)) {
      out.push_back(w.substr(0, 1));
      out.push_back(w.substr(1));
    } else {
      out.push_back(w);
    }
  }
}

void char_sequence(std::string_view s, bool whitespace, std::vector<uint32_t>& out) {
  out.clear();
  for (size_t i = 0; i < s.size();) {
    char32_t c = next_code_point(s, i);
    if (whitespace || !is_python_space(c)) out.push_back(static_cast<uint32_t>(c));
  }
}

}  // namespace

void Chrf::segment_stats(std::string_view hyp, const std::vector<std::string_view>& refs, double* out) const {
  const size_t n_seq = refs.size() + 1;
  std::vector<std::string> lowered;
  std::vector<std::string_view> texts;
  texts.reserve(n_seq);
  if (options_.lowercase) {
    lowered.push_back(python_lower(hyp));
    for (auto r : refs) lowered.push_back(python_lower(r));
    for (const auto& l : lowered) texts.push_back(l);
  } else {
    texts.push_back(hyp);
    for (auto r : refs) texts.push_back(r);
  }
  const int order = char_order_ + word_order_;
  // Symbol sequences: code points for character n-grams, then segment-local word ids.
  std::vector<std::vector<uint32_t>> chars(n_seq), words(n_seq);
  for (size_t s = 0; s < n_seq; ++s) char_sequence(texts[s], options_.whitespace, chars[s]);
  int word_bits = 1;
  if (word_order_ > 0) {
    std::vector<std::string_view> tokens;
    std::vector<size_t> lengths;
    for (size_t s = 0; s < n_seq; ++s) {
      size_t before = tokens.size();
      split_words(texts[s], tokens);
      lengths.push_back(tokens.size() - before);
    }
    std::vector<uint32_t> ids;
    word_bits = bits_for(assign_ids(tokens, ids));
    size_t offset = 0;
    for (size_t s = 0; s < n_seq; ++s) {
      words[s].assign(ids.begin() + offset, ids.begin() + offset + lengths[s]);
      offset += lengths[s];
    }
  }
  // matches[r][k]: clipped matches of reference r at order index k
  std::vector<std::vector<double>> matches(n_seq, std::vector<double>(order, 0.0));
  // Code points get segment-local dense ids so that character n-grams pack into 64-bit keys.
  const int char_bits = bits_for(remap_symbols(chars));
  const uint32_t word_tag = static_cast<uint32_t>(char_order_) + 1;
  const bool packable = order <= 15 && NgramTable::fits(char_order_, char_bits) &&
                        word_order_ * word_bits <= 60;
  if (packable) {
    NgramTable table;
    table.reset(chars[0].size() * char_order_ + words[0].size() * word_order_);
    auto add_hyp = [&](uint64_t key, uint32_t) { table.add_hyp(key); };
    for_each_ngram(chars[0].data(), chars[0].size(), char_order_, char_bits, 1, add_hyp);
    for_each_ngram(words[0].data(), words[0].size(), word_order_, word_bits, word_tag, add_hyp);
    for (size_t r = 1; r < n_seq; ++r) {
      // min(hyp, ref) grows by one for each reference occurrence up to the hypothesis count
      auto count = [&](uint64_t key, uint32_t) {
        auto* slot = table.add_ref(key, static_cast<uint32_t>(r));
        if (slot && slot->ref <= slot->hyp) matches[r][(key & 15) - 1] += 1;
      };
      for_each_ngram(chars[r].data(), chars[r].size(), char_order_, char_bits, 1, count);
      for_each_ngram(words[r].data(), words[r].size(), word_order_, word_bits, word_tag, count);
    }
  } else {  // orders too high to pack: exact sort-based counting
    std::vector<NgramCounts> counts;
    for (int k = 0; k < order; ++k) {
      bool is_char = k < char_order_;
      int n = is_char ? k + 1 : k + 1 - char_order_;
      count_ngrams(is_char ? chars : words, n, is_char ? char_bits : word_bits, counts);
      for (size_t r = 1; r < n_seq; ++r) matches[r][k] = static_cast<double>(clipped_matches(counts[0], counts[r]));
    }
  }
  auto n_grams = [](size_t len, int n) { return len >= static_cast<size_t>(n) ? static_cast<double>(len - n + 1) : 0.0; };
  std::vector<double> stats(3 * order), best;
  double best_f = -1.0;
  for (size_t r = 1; r < n_seq; ++r) {
    for (int k = 0; k < order; ++k) {
      bool is_char = k < char_order_;
      int n = is_char ? k + 1 : k + 1 - char_order_;
      double hyp_total = n_grams(is_char ? chars[0].size() : words[0].size(), n);
      double ref_total = n_grams(is_char ? chars[r].size() : words[r].size(), n);
      stats[3 * k] = ref_total == 0 ? 0.0 : hyp_total;  // sacreBLEU: no hits without reference n-grams
      stats[3 * k + 1] = ref_total;
      stats[3 * k + 2] = matches[r][k];
    }
    double f = f_score(stats.data());
    if (f > best_f) {
      best_f = f;
      best = stats;
    }
  }
  for (size_t i = 0; i < best.size(); ++i) out[i] = best[i];
}

double Chrf::f_score(const double* statistics) const {
  const double eps = 1e-16;
  const int order = char_order_ + word_order_;
  const double factor = static_cast<double>(options_.beta) * options_.beta;
  double score = 0.0, avg_prec = 0.0, avg_rec = 0.0;
  int effective_order = 0;
  for (int i = 0; i < order; ++i) {
    double n_hyp = statistics[3 * i], n_ref = statistics[3 * i + 1], n_match = statistics[3 * i + 2];
    double prec = n_hyp > 0 ? n_match / n_hyp : eps;
    double rec = n_ref > 0 ? n_match / n_ref : eps;
    double denom = factor * prec + rec;
    score += denom > 0 ? ((1 + factor) * prec * rec / denom) : eps;
    if (n_hyp > 0 && n_ref > 0) {
      avg_prec += prec;
      avg_rec += rec;
      ++effective_order;
    }
  }
  if (options_.eps_smoothing) return 100 * score / order;
  if (effective_order == 0) {
    avg_prec = avg_rec = 0.0;
  } else {
    avg_prec /= effective_order;
    avg_rec /= effective_order;
  }
  if (avg_prec + avg_rec != 0.0) {
    score = (1 + factor) * avg_prec * avg_rec;
    score /= ((factor * avg_prec) + avg_rec);
    return 100 * score;
  }
  return 0.0;
}

Score Chrf::score(const double* stats) const { return Score{name(), f_score(stats), ""}; }

void Chrf::add_signature_fields(Signature& sig) const {
  sig.set("case", options_.lowercase ? "lc" : "mixed", "c");
  sig.set("eff", options_.eps_smoothing ? "no" : "yes", "e");
  sig.set("nc", std::to_string(options_.char_order));
  sig.set("nw", std::to_string(options_.word_order));
  sig.set("space", options_.whitespace ? "yes" : "no", "s");
}

}  // namespace tt::metrics
