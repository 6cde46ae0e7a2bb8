#include "cli/decode_options.h"

#include "decode/length_penalty.h"

namespace tt::cli {

void DecodeOptions::finish() {
  translator.search.length_penalty = decode::parse_length_penalty(length_penalty);
  translator.max_src_len_name = "--max-src-len";
  translator.skip_invalid_name = "--skip-invalid";
}

void add_search_options(CLI::App& app, DecodeOptions& o, const std::string& group) {
  decode::SearchOptions& s = o.translator.search;
  app.add_option("--beam", s.beam, "Beam size (1: greedy)")->check(CLI::Range(1, 1024))->group(group);
  app.add_option("--length-penalty", o.length_penalty, "gnmt ((5+L)/6)^alpha, power (L^alpha) or none")
      ->check(CLI::IsMember({"gnmt", "power", "none"}))->group(group);
  app.add_option("--alpha", s.alpha, "Length-penalty exponent")->group(group);
  app.add_option("--max-len-a", s.max_len_a, "Max target length: a * source length + b")
      ->check(CLI::NonNegativeNumber)->group(group);
  app.add_option("--max-len-b", s.max_len_b, "Max target length: a * source length + b")
      ->check(CLI::NonNegativeNumber)->group(group);
  app.add_option("--min-len", s.min_len, "Min target length (pieces, without </s>)")
      ->check(CLI::NonNegativeNumber)->group(group);
  app.add_flag("--full-beam", s.full_beam,
               "Keep the beam full when hypotheses finish (fairseq, CTranslate2) instead of shrinking it")
      ->group(group);
}

void add_batching_options(CLI::App& app, DecodeOptions& o, const std::string& group) {
  decode::TranslatorOptions& t = o.translator;
  app.add_option("--batch-size", t.batch_size, "Sentences per batch")->check(CLI::Range(1, 1 << 20))->group(group);
  app.add_option("--batch-tokens", t.batch_tokens, "Padded source tokens per search batch (0: no limit)")
      ->check(CLI::NonNegativeNumber)->group(group);
  app.add_option("--window", t.window, "Batches per length-sorting window")->check(CLI::Range(1, 1 << 20))->group(group);
  app.add_option("--max-src-len", t.max_src_len, "Truncate longer inputs (pieces) with a warning")
      ->check(CLI::Range(1, 1 << 20))->group(group);
  app.add_flag("--skip-invalid", t.skip_invalid, "Invalid UTF-8: warn and output an empty line for it")->group(group);
}

}  // namespace tt::cli
