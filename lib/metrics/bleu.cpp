#include "metrics/bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "metrics/ngram_counts.h"
#include "metrics/ngram_table.h"
#include "metrics/unicode_text.h"
#include "util/error.h"

namespace tt::metrics {

SmoothMethod parse_smooth_method(const std::string& name) {
  if (name == "exp") return SmoothMethod::exp;
  if (name == "floor") return SmoothMethod::floor;
  if (name == "add-k") return SmoothMethod::add_k;
  if (name == "none") return SmoothMethod::none;
  throw ConfigError("unknown smoothing method '" + name + "'; valid methods are: exp, floor, add-k, none");
}

std::string smooth_method_name(SmoothMethod method) {
  switch (method) {
    case SmoothMethod::exp: return "exp";
    case SmoothMethod::floor: return "floor";
    case SmoothMethod::add_k: return "add-k";
    case SmoothMethod::none: return "none";
  }
  return "none";
}

static std::optional<double> default_smooth_value(SmoothMethod method) {
  if (method == SmoothMethod::floor) return 0.1;
  if (method == SmoothMethod::add_k) return 1.0;
  return std::nullopt;
}

// sacreBLEU's my_log: log floored at a very low number for zero.
static double my_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

BleuResult compute_bleu(const double correct_in[kBleuMaxOrder], const double total_in[kBleuMaxOrder],
                        double sys_len, double ref_len, SmoothMethod method, std::optional<double> smooth_value,
                        bool effective_order) {
  BleuResult r;
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    r.counts[n] = correct_in[n];
    r.totals[n] = total_in[n];
  }
  r.sys_len = sys_len;
  r.ref_len = ref_len;
  double value = smooth_value ? *smooth_value : default_smooth_value(method).value_or(0.0);
  r.bp = 1.0;
  if (sys_len < ref_len) r.bp = sys_len > 0 ? std::exp(1.0 - ref_len / sys_len) : 0.0;
  bool any = false;
  for (double c : r.counts) any = any || c != 0;
  if (!any) return r;  // early stop without matches (sacreBLEU #141): score 0, precisions 0

  double smooth_mteval = 1.0;
  int eff_order = kBleuMaxOrder;
  for (int n = 1; n <= kBleuMaxOrder; ++n) {
    if (method == SmoothMethod::add_k && n > 1) {
      r.counts[n - 1] += value;
      r.totals[n - 1] += value;
    }
    if (r.totals[n - 1] == 0) break;
    if (effective_order) eff_order = n;
    if (r.counts[n - 1] == 0) {
      if (method == SmoothMethod::exp) {
        smooth_mteval *= 2;
        r.precisions[n - 1] = 100.0 / (smooth_mteval * r.totals[n - 1]);
      } else if (method == SmoothMethod::floor) {
        r.precisions[n - 1] = 100.0 * value / r.totals[n - 1];
      }
    } else {
      r.precisions[n - 1] = 100.0 * r.counts[n - 1] / r.totals[n - 1];
    }
  }
  double log_sum = 0.0;
  for (int n = 0; n < eff_order; ++n) log_sum += my_log(r.precisions[n]);
  r.score = r.bp * std::exp(log_sum / eff_order);
  return r;
}

Bleu::Bleu(BleuOptions options) : options_(options) {}

namespace {
// A line as BLEU sees it: optionally lowercased, right-stripped, tokenized, split on whitespace.
std::string preprocess(const BleuOptions& options, std::string_view line) {
  if (options.lowercase) {
    std::string lower = python_lower(line);
    return tokenize(options.tokenizer, rstrip(lower), false);
  }
  return tokenize(options.tokenizer, rstrip(line), false);
}
}  // namespace

namespace {
// Per-thread scratch buffers, reused across segments so that the hot loop does not allocate. They hold
// no state between calls that could change a result.
struct BleuScratch {
  std::vector<std::string> texts;
  std::vector<std::string_view> tokens;
  std::vector<size_t> lengths, offsets;
  std::vector<uint32_t> ids;
  NgramTable table;
};
}  // namespace

void Bleu::segment_stats(std::string_view hyp, const std::vector<std::string_view>& refs, double* out) const {
  thread_local BleuScratch scratch;
  // Tokens of the hypothesis and every reference get dense ids shared across the segment.
  auto& texts = scratch.texts;
  texts.resize(refs.size() + 1);
  texts[0] = preprocess(options_, hyp);
  for (size_t r = 0; r < refs.size(); ++r) texts[r + 1] = preprocess(options_, refs[r]);
  auto& tokens = scratch.tokens;
  auto& lengths = scratch.lengths;
  tokens.clear();
  lengths.clear();
  for (const auto& text : texts) {
    size_t before = tokens.size();
    split_whitespace(text, tokens);
    lengths.push_back(tokens.size() - before);
  }
  auto& ids = scratch.ids;
  uint32_t distinct = assign_ids(tokens, ids);
  auto& offsets = scratch.offsets;
  offsets.assign(lengths.size() + 1, 0);
  for (size_t s = 0; s < lengths.size(); ++s) offsets[s + 1] = offsets[s] + lengths[s];
  const double hyp_len = static_cast<double>(lengths[0]);
  // Closest reference length; on a tie the shorter one.
  long closest_diff = -1, closest_len = -1;
  for (size_t r = 1; r < lengths.size(); ++r) {
    long len = static_cast<long>(lengths[r]);
    long diff = std::labs(static_cast<long>(lengths[0]) - len);
    if (closest_diff == -1 || diff < closest_diff) {
      closest_diff = diff;
      closest_len = len;
    } else if (diff == closest_diff && len < closest_len) {
      closest_len = len;
    }
  }
  out[0] = hyp_len;
  out[1] = static_cast<double>(closest_len);
  const int bits = bits_for(distinct);
  double correct[kBleuMaxOrder] = {};
  if (NgramTable::fits(kBleuMaxOrder, bits)) {
    // Hypothesis n-grams in a table; each reference raises their per-reference maximum count.
    NgramTable& table = scratch.table;
    table.reset(lengths[0] * kBleuMaxOrder);
    for_each_ngram(ids.data(), lengths[0], kBleuMaxOrder, bits, 1,
                   [&](uint64_t key, uint32_t) { table.add_hyp(key); });
    for (size_t r = 1; r < lengths.size(); ++r) {
      for_each_ngram(ids.data() + offsets[r], lengths[r], kBleuMaxOrder, bits, 1,
                     [&](uint64_t key, uint32_t) { table.add_ref(key, static_cast<uint32_t>(r)); });
    }
    for (uint32_t index : table.used()) {
      const auto& slot = table.slot(index);
      correct[(slot.key & 15) - 1] += std::min(slot.hyp, slot.ref_max);
    }
  } else {  // a segment with over 2^15 distinct tokens: sort-based counting
    std::vector<std::vector<uint32_t>> sequences(lengths.size());
    for (size_t s = 0; s < lengths.size(); ++s) {
      sequences[s].assign(ids.begin() + static_cast<long>(offsets[s]), ids.begin() + static_cast<long>(offsets[s + 1]));
    }
    std::vector<NgramCounts> counts;
    for (int n = 1; n <= kBleuMaxOrder; ++n) {
      count_ngrams(sequences, n, bits, counts);
      NgramCounts ref_max = counts.size() > 1 ? counts[1] : NgramCounts{};
      for (size_t r = 2; r < counts.size(); ++r) merge_max(ref_max, counts[r]);
      correct[n - 1] = static_cast<double>(clipped_matches(counts[0], ref_max));
    }
  }
  for (int n = 1; n <= kBleuMaxOrder; ++n) {
    out[2 + n - 1] = correct[n - 1];
    out[2 + kBleuMaxOrder + n - 1] = lengths[0] >= static_cast<size_t>(n) ? static_cast<double>(lengths[0] - n + 1) : 0.0;
  }
}

BleuResult Bleu::result(const double* stats) const {
  return compute_bleu(stats + 2, stats + 2 + kBleuMaxOrder, stats[0], stats[1], options_.smooth_method,
                      options_.smooth_value, options_.effective_order);
}

static std::string format_fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string bleu_verbose(const BleuResult& r) {
  std::string s;
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    if (n) s += '/';
    s += format_fixed(r.precisions[n], 1);
  }
  double ratio = r.ref_len != 0 ? r.sys_len / r.ref_len : 0.0;
  s += " (BP = " + format_fixed(r.bp, 3) + " ratio = " + format_fixed(ratio, 3) +
       " hyp_len = " + std::to_string(static_cast<long long>(r.sys_len)) +
       " ref_len = " + std::to_string(static_cast<long long>(r.ref_len)) + ")";
  return s;
}

Score Bleu::score(const double* stats) const {
  BleuResult r = result(stats);
  return Score{"BLEU", r.score, bleu_verbose(r)};
}

void Bleu::add_signature_fields(Signature& sig) const {
  sig.set("case", options_.lowercase ? "lc" : "mixed", "c");
  sig.set("eff", options_.effective_order ? "yes" : "no", "e");
  sig.set("tok", tokenizer_name(options_.tokenizer));
  std::string smooth = smooth_method_name(options_.smooth_method);
  if (auto def = default_smooth_value(options_.smooth_method)) {
    smooth.append(1, '[').append(format_fixed(options_.smooth_value.value_or(*def), 2)).append(1, ']');
  }
  sig.set("smooth", smooth, "s");
}

}  // namespace tt::metrics
