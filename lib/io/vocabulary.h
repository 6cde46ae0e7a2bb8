// One side of a model's vocabulary: text <-> the model's ids. A SentencePiece model segments the text. Its
// ids are the model's ids as they are (every model tt-train writes), or its pieces are looked up in a piece
// table (vocab.json, piece -> id: Marian / OPUS-MT models, whose SentencePiece ids mean nothing to the
// model), where a piece the table lacks is the model's <unk>, and a leading ">>xx<<" is one token (the
// target language of a multilingual model), as Marian's own tokenizer reads them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "data/spm_tokenizer.h"

namespace tt::io {

// A dense piece -> id map: ids 0..n-1, each once.
struct PieceTable {
  std::string path;                 // the file it was read from, for messages
  std::vector<std::string> pieces;  // by id
  std::unordered_map<std::string, int> ids;
  int unk_id = -1;  // the id of "<unk>"; the table must have one

  // Reads a JSON object {piece: id, ...}. Throws tt::FormatError naming the file and the offending entry
  // (not an object, an id out of range or repeated, a gap, no "<unk>").
  static PieceTable load(const std::string& path);
};

class Vocabulary {
 public:
  explicit Vocabulary(data::SpmTokenizer spm, std::optional<PieceTable> table = std::nullopt);

  void encode_ids(std::string_view text, std::vector<int>& out) const;
  std::vector<int> encode_ids(std::string_view text) const;
  // The text of model ids (ids must be valid; the search never outputs pad, bos or eos). Through a table,
  // leftover word marks (pieces the SentencePiece model lacks) become spaces and the text is trimmed.
  std::string decode_ids(const std::vector<int>& ids) const;
  const std::string& id_to_piece(int id) const;
  int piece_to_id(std::string_view piece) const;  // the unknown id for a piece the vocabulary lacks
  int size() const;  // model ids

  const data::SpmTokenizer& spm() const { return spm_; }
  bool has_table() const { return table_.has_value(); }
  // "SPM" or "SPM + TABLE", for messages.
  std::string describe() const;

 private:
  data::SpmTokenizer spm_;
  std::optional<PieceTable> table_;
};

}  // namespace tt::io
