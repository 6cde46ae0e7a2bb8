#include "io/vocabulary.h"

#include <nlohmann/json.hpp>

#include "io/json_file.h"
#include "util/error.h"

namespace tt::io {

PieceTable PieceTable::load(const std::string& path) {
  const nlohmann::json j = read_json_file(path);
  if (!j.is_object() || j.empty())
    throw FormatError(path + ": expected a JSON object mapping each piece to its id");
  PieceTable t;
  t.path = path;
  const int64_t n = static_cast<int64_t>(j.size());
  t.pieces.assign(static_cast<size_t>(n), {});
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (const auto& [piece, id] : j.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= n)
      throw FormatError(path + ": the id of \"" + piece + "\" is " + id.dump() + ", expected an integer in [0, " +
                        std::to_string(n) + ")");
    const auto i = static_cast<size_t>(id.get<int64_t>());
    if (seen[i])
      throw FormatError(path + ": id " + std::to_string(i) + " is given to both \"" + t.pieces[i] + "\" and \"" +
                        piece + "\"");
    seen[i] = true;
    t.pieces[i] = piece;
    t.ids.emplace(piece, static_cast<int>(i));
  }
  const auto unk = t.ids.find("<unk>");
  if (unk == t.ids.end()) throw FormatError(path + ": no \"<unk>\" entry (the id of pieces the table lacks)");
  t.unk_id = unk->second;
  return t;
}

Vocabulary::Vocabulary(data::SpmTokenizer spm, std::optional<PieceTable> table)
    : spm_(std::move(spm)), table_(std::move(table)) {}

void Vocabulary::encode_ids(std::string_view text, std::vector<int>& out) const {
  if (!table_) {
    spm_.encode_ids(text, out);
    return;
  }
  // Marian's multilingual models read the target language as a first token (">>fra<<"): its tokenizer
  // takes the leftmost ">>...<<" (to the last "<<") out of the text, and as a token when the line starts with it.
  out.clear();
  std::string rest(text);
  if (const size_t open = rest.find(">>"); open != std::string::npos) {
    const size_t close = rest.rfind("<<");
    if (close != std::string::npos && close >= open + 3) {
      if (open == 0) out.push_back(piece_to_id(rest.substr(0, close + 2)));
      rest.erase(open, close + 2 - open);
    }
  }
  std::vector<std::string> pieces;
  spm_.encode_pieces(rest, pieces);
  for (const std::string& p : pieces) out.push_back(piece_to_id(p));
}

std::vector<int> Vocabulary::encode_ids(std::string_view text) const {
  std::vector<int> ids;
  encode_ids(text, ids);
  return ids;
}

std::string Vocabulary::decode_ids(const std::vector<int>& ids) const {
  if (!table_) return spm_.decode_ids(ids);
  std::vector<std::string> pieces;
  pieces.reserve(ids.size());
  for (int id : ids) pieces.push_back(id_to_piece(id));
  // A shared table holds the other side's pieces too, which this SentencePiece model decodes as they are:
  // their word marks become spaces, and the line is trimmed, as Marian's tokenizer does.
  const std::string decoded = spm_.decode_pieces(pieces);
  static const std::string mark = "\u2581";
  std::string text;  // built anew (replacing in place drew a false GCC 12 overlap warning)
  text.reserve(decoded.size());
  for (size_t at = 0; at < decoded.size();) {
    if (decoded.compare(at, mark.size(), mark) == 0) {
      text += ' ';
      at += mark.size();
    } else {
      text += decoded[at++];
    }
  }
  const size_t first = text.find_first_not_of(' '), last = text.find_last_not_of(' ');
  return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

const std::string& Vocabulary::id_to_piece(int id) const {
  if (!table_) return spm_.id_to_piece(id);
  if (id < 0 || id >= size())
    throw FormatError(table_->path + ": id " + std::to_string(id) + " is outside [0, " + std::to_string(size()) + ")");
  return table_->pieces[static_cast<size_t>(id)];
}

int Vocabulary::piece_to_id(std::string_view piece) const {
  if (!table_) return spm_.piece_to_id(piece);
  const auto it = table_->ids.find(std::string(piece));
  return it == table_->ids.end() ? table_->unk_id : it->second;
}

int Vocabulary::size() const { return table_ ? static_cast<int>(table_->pieces.size()) : spm_.piece_size(); }

std::string Vocabulary::describe() const { return table_ ? spm_.path() + " + " + table_->path : spm_.path(); }

}  // namespace tt::io
