#include "io/model_vocab.h"

#include <filesystem>

#include "io/model_dir.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace tt::io {

namespace {

void copy_into(const std::string& from, const std::string& to) {
  const std::string temp = util::temp_path_beside(to);
  std::error_code ec;
  fs::copy_file(from, temp, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    fs::remove(temp, ec);
    throw IoError("cannot copy SentencePiece model " + from + " to " + to + ": " + ec.message());
  }
  util::commit_file(temp, to);
}

}  // namespace

nlohmann::json copy_vocab_files(const std::string& dir, const std::string& source_spm, const std::string& target_spm) {
  const bool shared = fs::weakly_canonical(source_spm) == fs::weakly_canonical(target_spm);
  if (shared) {
    copy_into(source_spm, (fs::path(dir) / "spm.model").string());
    return {{"source", "spm.model"}, {"target", "spm.model"}};
  }
  copy_into(source_spm, (fs::path(dir) / "source.spm.model").string());
  copy_into(target_spm, (fs::path(dir) / "target.spm.model").string());
  return {{"source", "source.spm.model"}, {"target", "target.spm.model"}};
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
    if (!fs::is_regular_file(path))
      throw FormatError(where + ": the " + std::string(side) + " SentencePiece model " + path + " is missing",
                        "copy the .model file back into the model directory");
    (std::string(side) == "source" ? files.source : files.target) = path;
  }
  return files;
}

}  // namespace tt::io
