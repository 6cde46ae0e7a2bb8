// Builds a vocabulary shortlist (decode/shortlist.h) for a model directory from a parallel text corpus,
// through the model's own SentencePiece models (tt-convert shortlist).
#pragma once

#include <cstdint>
#include <string>

#include "decode/shortlist.h"

namespace tt::io {

struct ShortlistCorpusOptions {
  int frequent = 100;   // target pieces every batch keeps
  int best = 200;       // target pieces per source piece
  int64_t max_lines = 0;  // 0: every line
};

struct ShortlistCorpusResult {
  decode::Shortlist shortlist;
  int64_t pairs = 0;  // sentence pairs counted
};

// Reads source_path and target_path line by line (same number of lines, else a tt::FormatError naming
// the shorter file); invalid UTF-8 is a tt::FormatError naming file and line.
ShortlistCorpusResult build_shortlist(const std::string& model_dir, const std::string& source_path,
                                      const std::string& target_path, const ShortlistCorpusOptions& options);

}  // namespace tt::io
