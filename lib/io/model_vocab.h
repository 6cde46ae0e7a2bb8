// The SentencePiece model(s) a model directory carries, so that the directory is all tt-translate needs.
// config.json: "vocab": {"source": FILE, "target": FILE}, file names inside the directory. A shared
// (joint) vocabulary is one file named twice ("spm.model"); separate ones are "source.spm.model" and
// "target.spm.model". A model trained elsewhere (tt-convert import-marian) also names the piece tables
// that give its pieces their model ids: "source_ids", "target_ids" (io/vocabulary.h; Marian: vocab.json,
// one file named twice).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "io/vocabulary.h"
#include "nn/config.h"

namespace tt::io {

struct VocabFiles {
  std::string source;  // full paths
  std::string target;
  std::string source_ids, target_ids;  // piece tables; empty: the SentencePiece ids are the model's
  bool shared() const { return source == target && source_ids == target_ids; }
};

// Copies the model(s) into `dir` (existing) and returns the "vocab" object to store in config.json.
// The same path for both sides gives one shared file. Throws tt::IoError naming a file it cannot copy.
nlohmann::json copy_vocab_files(const std::string& dir, const std::string& source_spm, const std::string& target_spm);
// The same from the models' bytes (`shared`: one joint model, written once as spm.model).
nlohmann::json write_vocab_files(const std::string& dir, const std::string& source, const std::string& target,
                                 bool shared);

// The SentencePiece model paths of model directory `dir`, from its config.json (`config`, as loaded).
// A missing "vocab" section or file is a tt::FormatError naming config.json and what to do.
VocabFiles vocab_files(const std::string& dir, const nlohmann::json& config);

// A SentencePiece model must have exactly as many pieces as the model side it serves has ids: another
// one gives nonsense or an out-of-range id mid-stream. Throws tt::FormatError naming the file, `owner`
// (the model directory or option it belongs to) and both sizes. `side` is "source" or "target".
void check_vocab_size(const Vocabulary& vocab, int model_vocab, const std::string& side, const std::string& owner);
void check_vocab_size(const data::SpmTokenizer& spm, int model_vocab, const std::string& side, const std::string& owner);

// The model directory's vocabularies (SentencePiece models, and piece tables where it has them), loaded and
// checked against `config`'s vocabulary sizes.
struct ModelTokenizers {
  Vocabulary source, target;
};
ModelTokenizers load_tokenizers(const std::string& dir, const nlohmann::json& config_json, const nn::ModelConfig& config);

}  // namespace tt::io
