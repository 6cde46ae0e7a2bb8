// tt-bleu's tokenizers and metrics on arbitrary UTF-8 (tt-bleu refuses invalid UTF-8 before they see
// it): the first line is the hypothesis, the rest references. Every tokenizer, BLEU, chrF++ and TER must
// finish without a sanitizer report, and scores must be finite and within [0, 100] (TER: >= 0).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "metrics/bleu.h"
#include "metrics/chrf.h"
#include "metrics/ter.h"
#include "metrics/tokenizer.h"
#include "util/text_io.h"

namespace m = tt::metrics;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // long lines add time, not coverage
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (!tt::util::is_valid_utf8(text)) return 0;
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) lines.push_back(text.substr(start, nl - start));
  lines.push_back(text.substr(start));
  const std::string& hyp = lines[0];
  std::vector<std::string_view> refs(lines.begin() + (lines.size() > 1 ? 1 : 0), lines.end());

  for (const auto& name : m::tokenizer_names()) {
    const m::Tokenizer tok = m::parse_tokenizer(name);
    (void)m::tokenize(tok, hyp, true);
    (void)m::tokenize(tok, hyp, false);
    m::BleuOptions o;
    o.tokenizer = tok;
    o.effective_order = true;
    m::Bleu bleu(o);
    std::vector<double> stats(bleu.n_stats());
    bleu.segment_stats(hyp, refs, stats.data());
    const double s = bleu.score(stats.data()).score;
    if (!std::isfinite(s) || s < 0 || s > 100.0001) __builtin_trap();
  }
  m::ChrfOptions co;
  co.word_order = 2;
  co.lowercase = true;
  m::Chrf chrf(co);
  std::vector<double> cstats(chrf.n_stats());
  chrf.segment_stats(hyp, refs, cstats.data());
  const double c = chrf.score(cstats.data()).score;
  if (!std::isfinite(c) || c < 0 || c > 100.0001) __builtin_trap();
  m::TercomOptions to;
  to.normalized = true;
  to.asian_support = true;
  m::Ter ter(to);
  std::vector<double> tstats(ter.n_stats());
  ter.segment_stats(hyp, refs, tstats.data());
  const double t = ter.score(tstats.data()).score;
  if (std::isnan(t) || t < 0) __builtin_trap();
  return 0;
}
