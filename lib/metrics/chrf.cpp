#include "metrics/chrf.h"

#include "metrics/ngram_counts.h"
#include "metrics/unicode_text.h"
#include "util/error.h"

namespace tt::metrics {

Chrf::Chrf(ChrfOptions options) : options_(options) {
  if (options_.char_order < 0 || options_.word_order < 0 || options_.char_order + options_.word_order == 0) {
    throw ConfigError("chrF needs a positive --chrf-char-order or --chrf-word-order");
  }
}

std::string Chrf::name() const { return "chrF" + std::to_string(options_.beta) + std::string(options_.word_order, '+'); }

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
  const int order = options_.char_order + options_.word_order;
  // per-sequence, per-order counts: counts[order_index][sequence]
  std::vector<std::vector<NgramCounts>> counts(order);
  std::vector<std::vector<uint32_t>> sequences(n_seq);
  for (size_t s = 0; s < n_seq; ++s) char_sequence(texts[s], options_.whitespace, sequences[s]);
  for (int n = 1; n <= options_.char_order; ++n) count_ngrams(sequences, n, 21, counts[n - 1]);
  if (options_.word_order > 0) {
    std::vector<std::string_view> words;
    std::vector<size_t> lengths;
    for (size_t s = 0; s < n_seq; ++s) {
      size_t before = words.size();
      split_words(texts[s], words);
      lengths.push_back(words.size() - before);
    }
    std::vector<uint32_t> ids;
    uint32_t distinct = assign_ids(words, ids);
    size_t offset = 0;
    for (size_t s = 0; s < n_seq; ++s) {
      sequences[s].assign(ids.begin() + offset, ids.begin() + offset + lengths[s]);
      offset += lengths[s];
    }
    for (int n = 1; n <= options_.word_order; ++n) {
      count_ngrams(sequences, n, bits_for(distinct), counts[options_.char_order + n - 1]);
    }
  }
  std::vector<double> stats(3 * order), best;
  double best_f = -1.0;
  for (size_t r = 1; r < n_seq; ++r) {
    for (int k = 0; k < order; ++k) {
      const NgramCounts& h = counts[k][0];
      const NgramCounts& ref = counts[k][r];
      stats[3 * k] = ref.empty() ? 0.0 : static_cast<double>(total_count(h));
      stats[3 * k + 1] = static_cast<double>(total_count(ref));
      stats[3 * k + 2] = static_cast<double>(clipped_matches(h, ref));
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
  const int order = options_.char_order + options_.word_order;
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
  sig.set("case", options_.lowercase ? "lc" : "mixed");
  sig.set("eff", options_.eps_smoothing ? "no" : "yes");
  sig.set("nc", std::to_string(options_.char_order));
  sig.set("nw", std::to_string(options_.word_order));
  sig.set("space", options_.whitespace ? "yes" : "no");
}

}  // namespace tt::metrics
