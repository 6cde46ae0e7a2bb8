#include "data/spm_trainer.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <unordered_map>

#include "data/sentence_sampler.h"
#include "data/spm_tokenizer.h"
#include "data/spm_status.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace tt::data {

namespace {

// Hands the sampled sentences to SentencePiece one by one, freeing each once the trainer has copied it,
// so the corpus is not held twice at the peak.
class VectorSentenceIterator : public sentencepiece::SentenceIterator {
 public:
  explicit VectorSentenceIterator(std::vector<std::string>& sentences) : sentences_(sentences) {}
  bool done() const override { return index_ >= sentences_.size(); }
  void Next() override { std::string().swap(sentences_[index_++]); }
  const std::string& value() const override { return sentences_[index_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  std::vector<std::string>& sentences_;
  size_t index_ = 0;
};

void validate(const SpmTrainOptions& o) {
  if (o.inputs.empty()) throw ConfigError(option_ref("inputs") + ": no training files given", "pass one or more text files");
  if (o.model_prefix.empty()) throw ConfigError(option_ref("model_prefix") + " must not be empty");
  if (o.model_type != "unigram" && o.model_type != "bpe" && o.model_type != "char" && o.model_type != "word") {
    throw ConfigError(option_ref("model_type") + ": unknown model type '" + o.model_type + "'",
                      "use unigram, bpe, char or word");
  }
  if (o.vocab_size <= 4) {
    throw ConfigError(option_ref("vocab_size") + " " + std::to_string(o.vocab_size) +
                      " is too small: the 4 special pieces (<pad> <unk> <s> </s>) alone need 4 ids");
  }
  if (!(o.character_coverage >= 0.98 && o.character_coverage <= 1.0)) {
    throw ConfigError(option_ref("character_coverage") + " must be in [0.98, 1.0]",
                      "use 1.0 for small alphabets, 0.9995 for CJK-rich text");
  }
  if (o.input_sentence_size != 0 && o.input_sentence_size <= 100) {
    throw ConfigError(option_ref("input_sentence_size") + " must be 0 (all sentences) or more than 100");
  }
  if (o.max_sentence_length < 10 || o.max_sentence_length > 1073741824) {
    throw ConfigError(option_ref("max_sentence_length") + " must be between 10 and 1073741824 bytes");
  }
  if (o.normalization != "nmt_nfkc" && o.normalization != "nfkc" && o.normalization != "nmt_nfkc_cf" &&
      o.normalization != "nfkc_cf" && o.normalization != "identity") {
    throw ConfigError(option_ref("normalization") + ": unknown rule '" + o.normalization + "'",
                      "use nmt_nfkc (default), nfkc, nmt_nfkc_cf, nfkc_cf or identity");
  }
  if (o.threads < 1 || o.threads > 128) throw ConfigError(option_ref("threads") + " must be between 1 and 128");
  for (const auto& symbol : o.user_defined_symbols) {
    if (symbol.empty() || symbol.find(',') != std::string::npos) {
      throw ConfigError(option_ref("user_defined_symbols") + ": symbol '" + symbol + "' is empty or contains a comma");
    }
  }
}

std::string join(const std::vector<std::string>& parts, char sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

}  // namespace

std::string vocab_file_text(const std::string& serialized_model) {
  sentencepiece::SentencePieceProcessor processor;
  auto status = processor.LoadFromSerializedProto(serialized_model);
  if (!status.ok()) throw InternalError("trained model does not load: " + status.ToString());
  // Same bytes as spm_train's .vocab: an ostream prints the float score with default precision.
  std::ostringstream os;
  for (int id = 0; id < processor.GetPieceSize(); ++id) {
    os << processor.IdToPiece(id) << "\t" << processor.GetScore(id) << "\n";
  }
  return os.str();
}

SpmTrainSummary train_spm(const SpmTrainOptions& options) {
  validate(options);
  SpmTrainSummary summary;
  summary.model_path = options.model_prefix + ".model";
  summary.vocab_path = options.model_prefix + ".vocab";
  // An unwritable output directory fails at once, not after a long training run.
  std::filesystem::path dir = std::filesystem::path(options.model_prefix).parent_path();
  if (dir.empty()) dir = ".";
  if (::access(dir.c_str(), W_OK) != 0) {
    throw IoError(options.model_prefix + ": cannot write in " + dir.string() + ": " + std::strerror(errno),
                  "check that the directory of " + option_ref("model_prefix") + " exists and is writable");
  }

  SamplerOptions sampler;
  sampler.max_sentences = options.input_sentence_size;
  sampler.max_sentence_bytes = static_cast<size_t>(options.max_sentence_length);
  sampler.seed = options.seed;
  SampledSentences sample = sample_sentences(options.inputs, sampler);
  summary.sentences_used = sample.sentences.size();
  summary.sentences_eligible = sample.eligible;
  summary.sentences_too_long = sample.too_long;
  if (sample.sentences.empty()) {
    throw FormatError("no usable training sentences in " + join(options.inputs, ' ') +
                          " (all lines are empty or longer than " + option_ref("max_sentence_length") + ")",
                      "check the " + option_ref("inputs") + " files");
  }

  // tt has sampled already: SentencePiece must take every sentence it is given, in this order.
  std::unordered_map<std::string, std::string> args = {
      {"model_type", options.model_type},
      {"vocab_size", std::to_string(options.vocab_size)},
      {"character_coverage", std::to_string(options.character_coverage)},
      {"input_sentence_size", "0"},
      {"shuffle_input_sentence", "false"},
      {"max_sentence_length", std::to_string(options.max_sentence_length)},
      {"byte_fallback", options.byte_fallback ? "true" : "false"},
      {"num_threads", std::to_string(options.threads)},
      {"normalization_rule_name", options.normalization},
      {"pad_id", std::to_string(spm_pad_id)},
      {"unk_id", std::to_string(spm_unk_id)},
      {"bos_id", std::to_string(spm_bos_id)},
      {"eos_id", std::to_string(spm_eos_id)},
      {"pad_piece", "<pad>"},
      {"unk_piece", "<unk>"},
      {"bos_piece", "<s>"},
      {"eos_piece", "</s>"},
      // SentencePiece logs every step at INFO; keep stderr quiet unless asked (this level is process-global).
      {"minloglevel", options.verbose ? "0" : "2"},
  };
  if (!options.user_defined_symbols.empty()) args["user_defined_symbols"] = join(options.user_defined_symbols, ',');

  VectorSentenceIterator iterator(sample.sentences);
  std::string serialized;
  auto status = sentencepiece::SentencePieceTrainer::Train(args, &iterator, &serialized);
  if (!status.ok()) {
    throw Error("SentencePiece training failed: " + spm_status_message(status, status.ToString()),
                "nothing was written; adjust the options (e.g. a smaller " + option_ref("vocab_size") + ") and retry");
  }
  if (serialized.empty()) throw InternalError("SentencePiece returned no model");

  std::string vocab_text = vocab_file_text(serialized);
  summary.piece_size = 0;
  for (char c : vocab_text) summary.piece_size += (c == '\n');
  util::AtomicFile model_file(summary.model_path);
  util::AtomicFile vocab_file(summary.vocab_path);
  model_file.stream().write(serialized.data(), static_cast<std::streamsize>(serialized.size()));
  vocab_file.stream() << vocab_text;
  // The vocab goes first: the .model is what users and tools look for, so it appears last, complete.
  vocab_file.commit();
  model_file.commit();
  return summary;
}

}  // namespace tt::data
