#include "data/spm_tokenizer.h"

#include <sentencepiece_processor.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <random>

#include "data/spm_status.h"
#include "util/error.h"
#include "util/file_kind.h"

// SentencePiece draws every sample from this per-thread generator (util.h in its sources, exported by
// the library but not declared in its public header). Reseeding it before one line is the only way to
// make that line's sample independent of what the thread sampled before.
namespace sentencepiece::random {
std::mt19937* GetRandomGenerator();
}

namespace tt::data {

namespace {

// Reads the whole model file ourselves so that "cannot open" and "not a model" are told apart. stdio,
// not ifstream: libstdc++'s filebuf throws "basic_filebuf::underflow" on a read error (a directory, EIO)
// without naming the file.
std::string read_model_bytes(const std::string& path) {
  if (util::is_special_file(path))  // a FIFO would hang the reader
    throw IoError(path + ": is " + util::file_kind(path) + ", expected a SentencePiece model file",
                  "pass the PREFIX.model file written by 'tt-tokenize train' (or spm_train)");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) {
    throw IoError(path + ": cannot open SentencePiece model: " + std::strerror(errno),
                  "pass the PREFIX.model file written by 'tt-tokenize train' (or spm_train)");
  }
  std::string bytes;
  char buffer[1 << 16];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, file.get())) > 0;) bytes.append(buffer, n);
  if (std::ferror(file.get())) {
    const int error = errno;
    throw IoError(path + ": cannot read SentencePiece model: " + std::strerror(error),
                  error == EISDIR ? "pass the PREFIX.model file inside the directory, not the directory"
                                  : "check the file and the disk it is on");
  }
  return bytes;
}

void check_status(const sentencepiece::util::Status& status, const char* what) {
  if (!status.ok()) {
    throw FormatError(std::string(what) + " failed: " + spm_status_message(status, status.ToString()));
  }
}

}  // namespace

SpmTokenizer SpmTokenizer::load(const std::string& path) {
  std::string bytes = read_model_bytes(path);
  if (bytes.empty()) {
    throw FormatError(path + ": empty file, not a SentencePiece model",
                      "retrain it with 'tt-tokenize train' or pass the right PREFIX.model");
  }
  auto processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
  sentencepiece::util::Status status;
  std::string thrown;
  try {
    status = processor->LoadFromSerializedProto(bytes);
  } catch (const std::exception& e) {
    // Its trie builder throws instead of returning a Status on some corrupt pieces (a NUL first byte).
    thrown = e.what();
  }
  if (!thrown.empty() || !status.ok() || processor->GetPieceSize() <= 0) {
    std::string why = !thrown.empty() ? "its pieces do not build a trie: " + thrown
                      : status.ok()   ? "it has no pieces"
                                      : spm_status_message(status, "cannot parse it");
    throw FormatError(path + ": not a valid SentencePiece model (" + why + ")",
                      "the file is corrupt or of another kind; pass the PREFIX.model from 'tt-tokenize train'");
  }
  return SpmTokenizer(std::move(processor), path);
}

SpmTokenizer::SpmTokenizer(std::unique_ptr<sentencepiece::SentencePieceProcessor> processor, std::string path)
    : processor_(std::move(processor)), path_(std::move(path)) {}
SpmTokenizer::SpmTokenizer(SpmTokenizer&&) noexcept = default;
SpmTokenizer& SpmTokenizer::operator=(SpmTokenizer&&) noexcept = default;
SpmTokenizer::~SpmTokenizer() = default;

void SpmTokenizer::encode_ids(std::string_view text, std::vector<int>& out) const {
  check_status(processor_->Encode(text, &out), "SentencePiece encode");
}

void SpmTokenizer::encode_pieces(std::string_view text, std::vector<std::string>& out) const {
  check_status(processor_->Encode(text, &out), "SentencePiece encode");
}

std::vector<int> SpmTokenizer::encode_ids(std::string_view text) const {
  std::vector<int> out;
  encode_ids(text, out);
  return out;
}

std::vector<std::string> SpmTokenizer::encode_pieces(std::string_view text) const {
  std::vector<std::string> out;
  encode_pieces(text, out);
  return out;
}

void SpmTokenizer::sample_encode_ids(std::string_view text, int nbest_size, float alpha,
                                     std::vector<int>& out) const {
  check_status(processor_->SampleEncode(text, nbest_size, alpha, &out), "SentencePiece sampling");
}

void SpmTokenizer::sample_encode_ids(std::string_view text, int nbest_size, float alpha, uint32_t key,
                                     std::vector<int>& out) const {
  sentencepiece::random::GetRandomGenerator()->seed(key);
  sample_encode_ids(text, nbest_size, alpha, out);
}

void SpmTokenizer::sample_encode_pieces(std::string_view text, int nbest_size, float alpha,
                                        std::vector<std::string>& out) const {
  check_status(processor_->SampleEncode(text, nbest_size, alpha, &out), "SentencePiece sampling");
}

std::vector<std::vector<int>> SpmTokenizer::nbest_encode_ids(std::string_view text, int n) const {
  std::vector<std::vector<int>> out;
  check_status(processor_->NBestEncode(text, n, &out), "SentencePiece n-best encode");
  return out;
}

std::vector<std::vector<std::string>> SpmTokenizer::nbest_encode_pieces(std::string_view text, int n) const {
  std::vector<std::vector<std::string>> out;
  check_status(processor_->NBestEncode(text, n, &out), "SentencePiece n-best encode");
  return out;
}

std::string SpmTokenizer::decode_ids(const std::vector<int>& ids) const {
  const int size = piece_size();
  for (int id : ids) {
    // SentencePiece indexes its piece table without a bounds check, so an out-of-range id must stop here.
    if (id < 0 || id >= size) {
      throw FormatError("id " + std::to_string(id) + " is out of range for " + path_ + " (ids are 0.." +
                        std::to_string(size - 1) + ")");
    }
  }
  std::string out;
  check_status(processor_->Decode(ids, &out), "SentencePiece decode");
  return out;
}

std::string SpmTokenizer::decode_pieces(const std::vector<std::string>& pieces) const {
  std::string out;
  check_status(processor_->Decode(pieces, &out), "SentencePiece decode");
  return out;
}

void SpmTokenizer::set_encode_extra_options(const std::string& options) {
  auto status = processor_->SetEncodeExtraOptions(options);
  if (!status.ok()) {
    throw ConfigError("invalid extra options '" + options + "': " + spm_status_message(status, "rejected"),
                      "use 'bos', 'eos', 'reverse' or 'unk', joined by ':'");
  }
}

void SpmTokenizer::set_decode_extra_options(const std::string& options) {
  auto status = processor_->SetDecodeExtraOptions(options);
  if (!status.ok()) {
    throw ConfigError("invalid extra options '" + options + "': " + spm_status_message(status, "rejected"),
                      "use 'bos', 'eos', 'reverse' or 'unk', joined by ':'");
  }
}

int SpmTokenizer::piece_size() const { return processor_->GetPieceSize(); }

const std::string& SpmTokenizer::id_to_piece(int id) const {
  if (id < 0 || id >= piece_size()) {
    throw FormatError("id " + std::to_string(id) + " is out of range for " + path_ + " (ids are 0.." +
                      std::to_string(piece_size() - 1) + ")");
  }
  return processor_->IdToPiece(id);
}

int SpmTokenizer::piece_to_id(std::string_view piece) const { return processor_->PieceToId(piece); }
float SpmTokenizer::score(int id) const { return processor_->GetScore(id); }
bool SpmTokenizer::is_control(int id) const { return processor_->IsControl(id); }
bool SpmTokenizer::is_unknown(int id) const { return processor_->IsUnknown(id); }
bool SpmTokenizer::is_byte(int id) const { return processor_->IsByte(id); }
int SpmTokenizer::pad_id() const { return processor_->pad_id(); }
int SpmTokenizer::unk_id() const { return processor_->unk_id(); }
int SpmTokenizer::bos_id() const { return processor_->bos_id(); }
int SpmTokenizer::eos_id() const { return processor_->eos_id(); }

bool SpmTokenizer::has_tt_special_ids() const {
  return pad_id() == spm_pad_id && unk_id() == spm_unk_id && bos_id() == spm_bos_id && eos_id() == spm_eos_id;
}

void set_sampling_seed(uint32_t seed) { sentencepiece::SetRandomGeneratorSeed(seed); }

}  // namespace tt::data
