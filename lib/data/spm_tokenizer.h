// SentencePiece encode/decode for tt's tools (tt-tokenize, tt-train, tt-translate), in-process.
// A thin, exception-throwing wrapper: SentencePiece reports failures as status objects (or aborts in its
// CHECK macros); here every failure is a tt::Error that names the model file.
//
// tt's special-id convention, used by every model `tt-tokenize train` writes (see spm_trainer.h):
//   0 <pad>   1 <unk>   2 <s> (bos)   3 </s> (eos)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace tt::data {

inline constexpr int spm_pad_id = 0;
inline constexpr int spm_unk_id = 1;
inline constexpr int spm_bos_id = 2;
inline constexpr int spm_eos_id = 3;

class SpmTokenizer {
 public:
  // Loads PATH.model. Throws tt::IoError if the file cannot be read and tt::FormatError if it is not a
  // SentencePiece model; both name the file.
  static SpmTokenizer load(const std::string& path);

  SpmTokenizer(SpmTokenizer&&) noexcept;
  SpmTokenizer& operator=(SpmTokenizer&&) noexcept;
  ~SpmTokenizer();

  // Encoding. Input must be UTF-8 (callers validate it, so they can name the line); failures throw
  // tt::FormatError. The `out` overloads reuse the caller's vector (the hot path of a streaming encoder).
  std::vector<int> encode_ids(std::string_view text) const;
  std::vector<std::string> encode_pieces(std::string_view text) const;
  void encode_ids(std::string_view text, std::vector<int>& out) const;
  void encode_pieces(std::string_view text, std::vector<std::string>& out) const;

  // Subword regularisation: one segmentation sampled from the `nbest_size` best (-1: from all; unigram) or
  // BPE-dropout with probability `alpha` (bpe). See set_sampling_seed().
  void sample_encode_ids(std::string_view text, int nbest_size, float alpha, std::vector<int>& out) const;
  void sample_encode_pieces(std::string_view text, int nbest_size, float alpha,
                            std::vector<std::string>& out) const;
  // The same, drawn from a generator started at `key`: the segmentation is a pure function of (text,
  // nbest_size, alpha, key) on any thread, so a training run can key each line's sample and resume exactly.
  void sample_encode_ids(std::string_view text, int nbest_size, float alpha, uint32_t key,
                         std::vector<int>& out) const;
  // The n best segmentations, best first (unigram models only).
  std::vector<std::vector<int>> nbest_encode_ids(std::string_view text, int n) const;
  std::vector<std::vector<std::string>> nbest_encode_pieces(std::string_view text, int n) const;

  // Decoding. An id outside [0, piece_size()) throws tt::FormatError; unknown pieces decode as <unk> does.
  std::string decode_ids(const std::vector<int>& ids) const;
  std::string decode_pieces(const std::vector<std::string>& pieces) const;

  // SentencePiece's "extra options" applied to every encode/decode: "bos", "eos", "reverse", "unk" joined
  // by ':' (e.g. "bos:eos"). Throws tt::ConfigError for an unknown option.
  void set_encode_extra_options(const std::string& options);
  void set_decode_extra_options(const std::string& options);

  // The vocabulary.
  int piece_size() const;
  const std::string& id_to_piece(int id) const;  // id must be in range (throws tt::FormatError otherwise)
  int piece_to_id(std::string_view piece) const;  // unk_id() for an unknown piece
  float score(int id) const;
  bool is_control(int id) const;
  bool is_unknown(int id) const;
  bool is_byte(int id) const;

  // Special ids (-1 when the model has none). Models trained by tt follow the convention above.
  int pad_id() const;
  int unk_id() const;
  int bos_id() const;
  int eos_id() const;
  bool has_tt_special_ids() const;

  const std::string& path() const { return path_; }

 private:
  SpmTokenizer(std::unique_ptr<sentencepiece::SentencePieceProcessor> processor, std::string path);
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  std::string path_;
};

// SentencePiece keeps its sampling generator in process-global, per-thread state: after this call each
// thread that samples starts from `seed`. A tool that samples on several threads gets reproducible output
// only if every thread sees the same lines on every run (tt's LinePipeline guarantees that).
void set_sampling_seed(uint32_t seed);

}  // namespace tt::data
