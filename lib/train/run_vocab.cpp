#include "train/run_vocab.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace tt::train {

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot read the SentencePiece model " + path + " (" + std::strerror(errno) + ")");
  std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw IoError("cannot read the SentencePiece model " + path);
  return bytes;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  util::AtomicFile out(path);
  out.stream().write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.commit();
}

}  // namespace

RunVocab read_run_vocab(const std::string& source_spm, const std::string& target_spm) {
  RunVocab vocab;
  vocab.shared = fs::weakly_canonical(source_spm) == fs::weakly_canonical(target_spm);
  vocab.source = read_bytes(source_spm);
  vocab.target = vocab.shared ? vocab.source : read_bytes(target_spm);
  return vocab;
}

nlohmann::json write_run_vocab(const std::string& dir, const RunVocab& vocab) {
  if (vocab.shared) {
    write_bytes((fs::path(dir) / "spm.model").string(), vocab.source);
    return {{"source", "spm.model"}, {"target", "spm.model"}};
  }
  write_bytes((fs::path(dir) / "source.spm.model").string(), vocab.source);
  write_bytes((fs::path(dir) / "target.spm.model").string(), vocab.target);
  return {{"source", "source.spm.model"}, {"target", "target.spm.model"}};
}

}  // namespace tt::train
