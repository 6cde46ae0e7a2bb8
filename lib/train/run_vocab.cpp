#include "train/run_vocab.h"

#include <filesystem>

#include "io/model_vocab.h"
#include "util/file_bytes.h"

namespace fs = std::filesystem;

namespace tt::train {

RunVocab read_run_vocab(const std::string& source_spm, const std::string& target_spm) {
  RunVocab vocab;
  vocab.shared = fs::weakly_canonical(source_spm) == fs::weakly_canonical(target_spm);
  vocab.source = util::read_file_bytes(source_spm);
  vocab.target = vocab.shared ? vocab.source : util::read_file_bytes(target_spm);
  return vocab;
}

nlohmann::json write_run_vocab(const std::string& dir, const RunVocab& vocab) {
  return io::write_vocab_files(dir, vocab.source, vocab.target, vocab.shared);
}

}  // namespace tt::train
