#include "io/model_vocab.h"

#include <filesystem>

#include "io/model_dir.h"
#include "util/error.h"
#include "util/file_bytes.h"
#include "util/file_kind.h"

namespace fs = std::filesystem;

namespace tt::io {

nlohmann::json write_vocab_files(const std::string& dir, const std::string& source, const std::string& target,
                                 bool shared) {
  if (shared) {
    util::write_file_bytes((fs::path(dir) / "spm.model").string(), source);
    return {{"source", "spm.model"}, {"target", "spm.model"}};
  }
  util::write_file_bytes((fs::path(dir) / "source.spm.model").string(), source);
  util::write_file_bytes((fs::path(dir) / "target.spm.model").string(), target);
  return {{"source", "source.spm.model"}, {"target", "target.spm.model"}};
}

nlohmann::json copy_vocab_files(const std::string& dir, const std::string& source_spm, const std::string& target_spm) {
  const bool shared = fs::weakly_canonical(source_spm) == fs::weakly_canonical(target_spm);
  for (const std::string* path : {&source_spm, &target_spm})  // (copy_file's own error for these says "Success")
    util::require_regular_file(*path, "a SentencePiece model");
  const std::string source = util::read_file_bytes(source_spm);
  return write_vocab_files(dir, source, shared ? source : util::read_file_bytes(target_spm), shared);
}

VocabFiles vocab_files(const std::string& dir, const nlohmann::json& config) {
  const std::string where = (fs::path(dir) / config_file_name).string();
  const auto vocab = config.find("vocab");
  if (vocab == config.end() || !vocab->is_object())
    throw FormatError(where + ": no \"vocab\" section naming the SentencePiece model(s)",
                      "models trained with tt-train on text carry it; this one was trained on ids only");
  VocabFiles files;
  for (const char* side : {"source", "target"}) {
    const auto name = vocab->find(side);
    if (name == vocab->end() || !name->is_string() || name->get<std::string>().empty())
      throw FormatError(where + ": \"vocab\" has no \"" + std::string(side) + "\" file name");
    const std::string path = (fs::path(dir) / name->get<std::string>()).string();
    if (util::is_special_file(path))  // a FIFO would hang the reader
      throw IoError(path + ": is " + util::file_kind(path) + ", expected a SentencePiece model file");
    if (!fs::is_regular_file(path))
      throw FormatError(where + ": the " + std::string(side) + " SentencePiece model " + path + " is missing",
                        "copy the .model file back into the model directory");
    (std::string(side) == "source" ? files.source : files.target) = path;
  }
  return files;
}

void check_vocab_size(const data::SpmTokenizer& spm, int model_vocab, const std::string& side, const std::string& owner) {
  if (spm.piece_size() == model_vocab) return;
  throw FormatError(owner + ": the " + side + " SentencePiece model " + spm.path() + " has " +
                        std::to_string(spm.piece_size()) + " pieces, but the model's " + side + " vocabulary has " +
                        std::to_string(model_vocab) + " ids",
                    "use the SentencePiece model the model was trained with");
}

ModelTokenizers load_tokenizers(const std::string& dir, const nlohmann::json& config_json, const nn::ModelConfig& config) {
  const VocabFiles files = vocab_files(dir, config_json);
  ModelTokenizers t{data::SpmTokenizer::load(files.source), data::SpmTokenizer::load(files.target)};
  check_vocab_size(t.source, config.vocab_size_src, "source", dir);
  check_vocab_size(t.target, config.vocab_size_tgt, "target", dir);
  return t;
}

}  // namespace tt::io
