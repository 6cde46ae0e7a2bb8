// The search and batching flags tt-translate and tt-attnviz share, each defined once: same
// name, range and help in both tools, and one place that turns their string values into the library's
// decode::TranslatorOptions. A tool adds the groups it has, parses, then calls finish().
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "decode/translator.h"

namespace tt::cli {

struct DecodeOptions {
  decode::TranslatorOptions translator;
  std::string length_penalty = "gnmt";  // as given (gnmt, power, none); finish() parses it
  std::string sampling;                  // as given ("", topk:K, full); finish() parses it
  std::string target_prefix;             // --target-prefix FILE ("": none)
  std::string constraints;               // --constraints FILE ("": none)

  // After parsing: the parsed values into `translator`, and the flag names its messages use.
  void finish();
};

// --beam --length-penalty --alpha --max-len-a --max-len-b --min-len --full-beam --no-repeat-ngram --ban-unk
// --repetition-penalty, in help group `group`.
void add_search_options(CLI::App& app, DecodeOptions& o, const std::string& group);
// --sampling --temperature, in help group `group` (the seed: common_options' --seed).
void add_sampling_options(CLI::App& app, DecodeOptions& o, const std::string& group);
// --target-prefix --constraints, in help group `group`.
void add_target_options(CLI::App& app, DecodeOptions& o, const std::string& group);

// The files of --target-prefix and --constraints, open for a Translator::run.
class TranslatorFiles {
 public:
  explicit TranslatorFiles(const DecodeOptions& o);
  decode::TranslatorInputs inputs();

 private:
  std::optional<util::LineReader> prefixes_, constraints_;
};
// --batch-size --batch-tokens --window --max-src-len --skip-invalid, in help group `group`.
void add_batching_options(CLI::App& app, DecodeOptions& o, const std::string& group);

}  // namespace tt::cli
