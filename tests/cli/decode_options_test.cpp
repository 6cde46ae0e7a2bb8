// The search and batching flags tt-translate and tt-attnviz share: the values land in the library's
// TranslatorOptions, the string values are parsed, the ranges hold, and the messages name the flags.
#include "cli/decode_options.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

namespace {

// Parses `args` into a fresh DecodeOptions through an App with both groups.
tt::cli::DecodeOptions parsed(std::vector<std::string> args) {
  CLI::App app;
  tt::cli::DecodeOptions d;
  tt::cli::add_search_options(app, d, "Search");
  tt::cli::add_batching_options(app, d, "Batching");
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order
  app.parse(args);
  d.finish();
  return d;
}

}  // namespace

TEST_CASE("decode options: every flag lands in TranslatorOptions", "[cli]") {
  const auto d = parsed({"--beam", "5", "--length-penalty", "power", "--alpha", "1.5", "--max-len-a", "2",
                         "--max-len-b", "7", "--min-len", "3", "--batch-size", "9", "--batch-tokens", "300",
                         "--window", "4", "--max-src-len", "50", "--skip-invalid"});
  const tt::decode::TranslatorOptions& o = d.translator;
  CHECK(o.search.beam == 5);
  CHECK(o.search.length_penalty == tt::decode::LengthPenalty::power);
  CHECK(o.search.alpha == 1.5f);
  CHECK(o.search.max_len_a == 2.0f);
  CHECK(o.search.max_len_b == 7);
  CHECK(o.search.min_len == 3);
  CHECK(o.batch_size == 9);
  CHECK(o.batch_tokens == 300);
  CHECK(o.window == 4);
  CHECK(o.max_src_len == 50);
  CHECK(o.skip_invalid);
  CHECK(o.max_src_len_name == "--max-src-len");  // the translator's messages name the flags
  CHECK(o.skip_invalid_name == "--skip-invalid");
  // Defaults are the library's (the paper's search).
  const auto plain = parsed({});
  CHECK(plain.translator.search.beam == tt::decode::TranslatorOptions{}.search.beam);
  CHECK(plain.translator.search.length_penalty == tt::decode::LengthPenalty::gnmt);
  CHECK(plain.translator.batch_size == tt::decode::TranslatorOptions{}.batch_size);
}

TEST_CASE("decode options: out-of-range and unknown values are usage errors", "[cli]") {
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--beam", "0"}, {"--length-penalty", "wu"}, {"--max-len-a", "-1"},
        {"--batch-size", "0"}, {"--window", "0"}, {"--max-src-len", "0"}, {"--batch-tokens", "-5"}}) {
    INFO(bad[0] << " " << bad[1]);
    CHECK_THROWS_AS(parsed(bad), CLI::ParseError);
  }
}
