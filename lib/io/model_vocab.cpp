#include "io/model_vocab.h"

#include <algorithm>
#include <filesystem>
#include <tuple>

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
  // key, what the file is, whether the key must be there, where its path goes
  const std::tuple<const char*, const char*, bool, std::string*> entries[] = {
      {"source", "SentencePiece model", true, &files.source},
      {"target", "SentencePiece model", true, &files.target},
      {"source_ids", "piece table", false, &files.source_ids},
      {"target_ids", "piece table", false, &files.target_ids}};
  for (const auto& item : vocab->items()) {
    const std::string key = item.key();  // a named copy: clang cannot capture a structured binding
    if (std::none_of(std::begin(entries), std::end(entries), [&](const auto& e) { return std::get<0>(e) == key; }))
      throw FormatError(where + ": \"vocab\" has an unknown key \"" + key + "\"",
                        "expected source, target, source_ids, target_ids");
  }
  for (const auto& [key, what, required, out] : entries) {
    const auto name = vocab->find(key);
    if (name == vocab->end() && !required) continue;
    if (name == vocab->end() || !name->is_string() || name->get<std::string>().empty())
      throw FormatError(where + ": \"vocab\" has no \"" + std::string(key) + "\" file name");
    if (const std::string n = name->get<std::string>(); n == "." || n == ".." || fs::path(n).filename().string() != n)
      throw FormatError(where + ": vocab." + key + " = \"" + n + "\" is not a file name inside the directory");
    const std::string path = (fs::path(dir) / name->get<std::string>()).string();
    if (util::is_special_file(path))  // a FIFO would hang the reader
      throw IoError(path + ": is " + util::file_kind(path) + ", expected a " + what + " file");
    if (!util::regular_file_exists(path))
      throw FormatError(where + ": the " + std::string(key) + " " + what + " " + path + " is missing",
                        "copy the file back into the model directory");
    *out = path;
  }
  if (files.source_ids.empty() != files.target_ids.empty())
    throw FormatError(where + ": \"vocab\" names a piece table for one side only",
                      "name both \"source_ids\" and \"target_ids\" (the same file for a shared table)");
  return files;
}

namespace {

void check_size(int size, const std::string& what, int model_vocab, const std::string& side, const std::string& owner) {
  if (size == model_vocab) return;
  throw FormatError(owner + ": the " + side + " " + what + " has " + std::to_string(size) + " pieces, but the model's " +
                        side + " vocabulary has " + std::to_string(model_vocab) + " ids",
                    "use the vocabulary the model was trained with");
}

}  // namespace

void check_vocab_size(const Vocabulary& vocab, int model_vocab, const std::string& side, const std::string& owner) {
  check_size(vocab.size(), (vocab.has_table() ? "piece table of " : "SentencePiece model ") + vocab.describe(),
             model_vocab, side, owner);
}

void check_vocab_size(const data::SpmTokenizer& spm, int model_vocab, const std::string& side, const std::string& owner) {
  check_size(spm.piece_size(), "SentencePiece model " + spm.path(), model_vocab, side, owner);
}

namespace {

Vocabulary load_side(const std::string& spm, const std::string& table) {
  if (table.empty()) return Vocabulary(data::SpmTokenizer::load(spm));
  return Vocabulary(data::SpmTokenizer::load(spm), PieceTable::load(table));
}

}  // namespace

ModelTokenizers load_tokenizers(const std::string& dir, const nlohmann::json& config_json, const nn::ModelConfig& config) {
  const VocabFiles files = vocab_files(dir, config_json);
  ModelTokenizers t{load_side(files.source, files.source_ids), load_side(files.target, files.target_ids)};
  check_vocab_size(t.source, config.vocab_size_src, "source", dir);
  check_vocab_size(t.target, config.vocab_size_tgt, "target", dir);
  return t;
}

}  // namespace tt::io
