#include "cli/decode_options.h"

#include <charconv>
#include <cstdlib>

#include "cli/validators.h"
#include "decode/constraints.h"
#include "decode/length_penalty.h"
#include "decode/search.h"
#include "util/error.h"

namespace tt::cli {

void DecodeOptions::finish() {
  translator.search.length_penalty = decode::parse_length_penalty(length_penalty);
  decode::SearchOptions& s = translator.search;
  if (!sampling.empty() && sampling != "none") {
    s.sampling = true;
    if (sampling == "full") {
      s.sampling_topk = 0;
    } else if (sampling.rfind("topp:", 0) == 0) {
      char* end = nullptr;
      const double p = std::strtod(sampling.c_str() + 5, &end);
      if (end == sampling.c_str() + 5 || *end != '\0' || !(p > 0) || p > 1)
        throw UsageError("--sampling '" + sampling + "': expected topp:P with 0 < P <= 1",
                         "e.g. --sampling topp:0.9 draws from the fewest best tokens holding 90 % of the probability");
      s.sampling_topk = 0;
      s.sampling_topp = static_cast<float>(p);
    } else {
      int k = 0;
      const char* digits = sampling.c_str() + 5;
      auto [end, ec] = std::from_chars(digits, sampling.c_str() + sampling.size(), k);
      if (sampling.rfind("topk:", 0) != 0 || ec != std::errc() || *end != '\0' || k < 1)
        throw UsageError("--sampling '" + sampling + "': expected topk:K (K >= 1), topp:P (0 < P <= 1) or full",
                         "e.g. --sampling topk:10, --sampling topp:0.9, or --sampling full for the whole vocabulary");
      s.sampling_topk = k;
    }
  }
  translator.max_src_len_name = "--max-src-len";
  translator.skip_invalid_name = "--skip-invalid";
  try {  // before any model is read: a contradiction in the flags is a usage error (exit 2)
    decode::validate(s);
    if (!constraints.empty()) decode::check_constraint_options(s);
  } catch (const ConfigError& e) {
    throw UsageError(e.what(), e.hint());
  }
}

void add_search_options(CLI::App& app, DecodeOptions& o, const std::string& group) {
  decode::SearchOptions& s = o.translator.search;
  app.add_option("--beam", s.beam, "Beam size (1: greedy)")->check(CLI::Range(1, 1024))->group(group);
  app.add_option("--length-penalty", o.length_penalty, "gnmt ((5+L)/6)^alpha, power (L^alpha) or none")
      ->check(CLI::IsMember({"gnmt", "power", "none"}))->group(group);
  app.add_option("--alpha", s.alpha, "Length-penalty exponent")->check(finite)->group(group);
  app.add_option("--max-len-a", s.max_len_a, "Max target length: a * source length + b")
      ->check(non_negative)->group(group);
  app.add_option("--max-len-b", s.max_len_b, "Max target length: a * source length + b")
      ->check(non_negative)->group(group);
  app.add_option("--min-len", s.min_len, "Min target length (pieces, without </s>)")
      ->check(non_negative)->group(group);
  app.add_flag("--full-beam", s.full_beam,
               "Keep the beam full when hypotheses finish (fairseq, CTranslate2) instead of shrinking it")
      ->group(group);
  app.add_option("--no-repeat-ngram", s.no_repeat_ngram, "No n-gram of N tokens twice in a translation (0: off)")
      ->check(CLI::Range(0, 1 << 20))->group(group);
  app.add_flag("--ban-unk", s.ban_unk, "Never output <unk>")->group(group);
  app.add_option("--repetition-penalty", s.repetition_penalty,
                 "Divide the score of every token already in the translation by P where positive, multiply it "
                 "where negative (CTRL, as CTranslate2; 1: off)")
      ->check(positive)->group(group);
}

void add_target_options(CLI::App& app, DecodeOptions& o, const std::string& group) {
  app.add_option("--target-prefix", o.target_prefix,
                 "FILE of one prefix per input line (raw text; empty: none) each translation starts with, fed to "
                 "the decoder in one pass")->type_name("FILE")
      ->group(group);
  app.add_option("--constraints", o.constraints,
                 "FILE of one line per input line: tab-separated target phrases (raw text; empty: none) that must "
                 "all appear in the translation (terminology; dynamic beam allocation)")->type_name("FILE")
      ->group(group);
}

TranslatorFiles::TranslatorFiles(const DecodeOptions& o) {
  if (!o.target_prefix.empty()) prefixes_.emplace(o.target_prefix);
  if (!o.constraints.empty()) constraints_.emplace(o.constraints);
}

decode::TranslatorInputs TranslatorFiles::inputs() {
  return {prefixes_ ? &*prefixes_ : nullptr, constraints_ ? &*constraints_ : nullptr};
}

void add_sampling_options(CLI::App& app, DecodeOptions& o, const std::string& group) {
  app.add_option("--sampling", o.sampling,
                 "Sample instead of searching: topk:K (from the K best tokens), topp:P (from the fewest best tokens "
                 "holding a share P of the probability) or full; --beam samples per line")
      ->group(group);
  app.add_option("--temperature", o.translator.search.temperature, "Sampling temperature (log-probabilities / T)")
      ->check(positive)->capture_default_str()->group(group);
}

void add_batching_options(CLI::App& app, DecodeOptions& o, const std::string& group) {
  decode::TranslatorOptions& t = o.translator;
  app.add_option("--batch-size", t.batch_size, "Sentences per batch")->check(CLI::Range(1, 1 << 20))->group(group);
  app.add_option("--batch-tokens", t.batch_tokens, "Padded source tokens per search batch (0: no limit)")
      ->check(non_negative)->group(group);
  app.add_option("--window", t.window, "Batches per length-sorting window")->check(CLI::Range(1, 1 << 20))->group(group);
  app.add_option("--max-src-len", t.max_src_len,
                 "Longest source given to the model at once, in pieces (tt-translate translates a longer line in "
                 "parts; tt-attnviz truncates it, with a warning)")
      ->check(CLI::Range(1, 1 << 20))->group(group);
  app.add_flag("--skip-invalid", t.skip_invalid, "Invalid UTF-8: warn and output an empty line for it")->group(group);
}

}  // namespace tt::cli
