// Training SentencePiece models with tt's conventions:
//   - special ids pad=0 <pad>, unk=1 <unk>, bos=2 <s>, eos=3 </s> (spm_tokenizer.h), the same for every model;
//   - several input files give one joint (shared) vocabulary;
//   - sampling of large corpora (input_sentence_size) is done by tt with `seed` (sentence_sampler.h), so the
//     same inputs, options and seed give byte-identical model files;
//   - output is all-or-nothing: the model is trained in memory and PREFIX.model / PREFIX.vocab are written
//     to temporary files that are renamed into place only when both are complete.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tt::data {

struct SpmTrainOptions {
  std::vector<std::string> inputs;
  std::string model_prefix;
  int vocab_size = 8000;
  std::string model_type = "unigram";  // unigram | bpe | char | word
  double character_coverage = 0.9995;
  size_t input_sentence_size = 0;      // 0: train on every sentence
  std::vector<std::string> user_defined_symbols;
  bool byte_fallback = false;
  int max_sentence_length = 4192;      // bytes; longer lines are skipped
  std::string normalization = "nmt_nfkc";  // nmt_nfkc | nfkc | nmt_nfkc_cf | nfkc_cf | identity
  int threads = 1;
  uint64_t seed = 0;
  bool verbose = false;                // let SentencePiece's trainer log to stderr
};

struct SpmTrainSummary {
  std::string model_path;
  std::string vocab_path;
  int piece_size = 0;
  size_t sentences_used = 0;
  size_t sentences_eligible = 0;
  size_t sentences_too_long = 0;
};

// Throws tt::ConfigError for invalid options (naming the option), tt::IoError / tt::FormatError for bad
// inputs (naming FILE:LINE), and tt::Error when SentencePiece rejects the training run.
SpmTrainSummary train_spm(const SpmTrainOptions& options);

// The text of a .vocab file for a serialized model ("piece<TAB>score" per line, as spm_train writes it).
std::string vocab_file_text(const std::string& serialized_model);

}  // namespace tt::data
