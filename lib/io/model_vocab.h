// The SentencePiece model(s) a model directory carries, so that the directory is all tt-translate needs.
// config.json: "vocab": {"source": FILE, "target": FILE}, file names inside the directory. A shared
// (joint) vocabulary is one file named twice ("spm.model"); separate ones are "source.spm.model" and
// "target.spm.model".
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tt::io {

struct VocabFiles {
  std::string source;  // full paths
  std::string target;
  bool shared() const { return source == target; }
};

// Copies the model(s) into `dir` (existing) and returns the "vocab" object to store in config.json.
// The same path for both sides gives one shared file. Throws tt::IoError naming a file it cannot copy.
nlohmann::json copy_vocab_files(const std::string& dir, const std::string& source_spm, const std::string& target_spm);

// The SentencePiece model paths of model directory `dir`, from its config.json (`config`, as loaded).
// A missing "vocab" section or file is a tt::FormatError naming config.json and what to do.
VocabFiles vocab_files(const std::string& dir, const nlohmann::json& config);

}  // namespace tt::io
