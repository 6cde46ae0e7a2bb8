#include "metrics/ter.h"

#include "metrics/ngram_counts.h"
#include "metrics/translation_edit_rate.h"
#include "metrics/unicode_text.h"

namespace tt::metrics {

Ter::Ter(TercomOptions options) : options_(options) {}

void Ter::segment_stats(std::string_view hyp, const std::vector<std::string_view>& refs, double* out) const {
  std::vector<std::string> texts;
  texts.reserve(refs.size() + 1);
  texts.push_back(tercom_tokenize(options_, rstrip(hyp)));
  for (auto r : refs) {
    // sacreBLEU preprocesses references twice (once when caching them, again when extracting their
    // words); tercom normalization is not idempotent ("mary's ." -> "mary 's ."), so neither are we.
    std::string once = tercom_tokenize(options_, rstrip(r));
    texts.push_back(options_.normalized ? tercom_tokenize(options_, rstrip(once)) : std::move(once));
  }
  std::vector<std::string_view> words;
  std::vector<size_t> lengths;
  for (const auto& t : texts) {
    size_t before = words.size();
    split_whitespace(t, words);
    lengths.push_back(words.size() - before);
  }
  std::vector<uint32_t> ids;
  assign_ids(words, ids);
  std::vector<uint32_t> hyp_ids(ids.begin(), ids.begin() + lengths[0]);
  size_t offset = lengths[0];
  int64_t best_edits = 10000000000000000;
  int64_t ref_lengths = 0;
  for (size_t r = 1; r < texts.size(); ++r) {
    std::vector<uint32_t> ref_ids(ids.begin() + offset, ids.begin() + offset + lengths[r]);
    offset += lengths[r];
    auto [edits, ref_len] = translation_edit_rate(hyp_ids, ref_ids);
    ref_lengths += ref_len;
    if (edits < best_edits) best_edits = edits;
  }
  out[0] = static_cast<double>(best_edits);
  out[1] = static_cast<double>(ref_lengths) / static_cast<double>(refs.size());
}

Score Ter::score(const double* stats) const {
  double edits = stats[0], ref_length = stats[1], score;
  if (ref_length > 0) {
    score = edits / ref_length;
  } else if (edits > 0) {
    score = 1.0;  // empty reference(s) and non-empty hypothesis
  } else {
    score = 0.0;
  }
  return Score{"TER", 100 * score, ""};
}

void Ter::add_signature_fields(Signature& sig) const {
  sig.set("case", options_.case_sensitive ? "mixed" : "lc", "c");
  sig.set("tok", "tercom", "t");
  sig.set("norm", options_.normalized ? "yes" : "no", "nr");
  sig.set("punct", options_.no_punct ? "no" : "yes", "pn");
  sig.set("asian", options_.asian_support ? "yes" : "no", "as");
}

}  // namespace tt::metrics
