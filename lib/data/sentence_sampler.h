// Reads training sentences for SentencePiece from text files and, for large corpora, keeps a uniform
// random sample of them. tt samples itself (reservoir sampling on a seeded Philox stream) instead of
// leaving it to SentencePiece, whose 0.1.97 trainer shuffles with a fixed, unchangeable seed: this way
// `--seed` really selects the sample, and the same seed always gives the same sentences.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tt::data {

struct SamplerOptions {
  size_t max_sentences = 0;          // 0: keep every sentence
  size_t max_sentence_bytes = 4192;  // longer lines are skipped (as SentencePiece's trainer does)
  uint64_t seed = 0;
};

struct SampledSentences {
  std::vector<std::string> sentences;  // in reservoir order (deterministic for a given seed)
  size_t eligible = 0;                 // sentences seen that were not skipped
  size_t too_long = 0;                 // skipped: longer than max_sentence_bytes
  size_t skipped_other = 0;            // skipped: empty, or containing SentencePiece's reserved U+2047
};

// Reads every line of every file in order. Throws tt::IoError naming an unreadable file and
// tt::FormatError naming FILE:LINE for invalid UTF-8.
SampledSentences sample_sentences(const std::vector<std::string>& paths, const SamplerOptions& options);

}  // namespace tt::data
