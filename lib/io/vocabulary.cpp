#include "io/vocabulary.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/file_kind.h"

namespace tt::io {

PieceTable PieceTable::load(const std::string& path) {
  if (util::is_special_file(path)) throw IoError(path + ": is " + util::file_kind(path) + ", expected a JSON file");
  std::ifstream in(path);
  if (!in) throw IoError("cannot open " + path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(path + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object() || j.empty())
    throw FormatError(path + ": expected a JSON object mapping each piece to its id");
  PieceTable t;
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

Vocabulary::Vocabulary(data::SpmTokenizer spm, std::optional<PieceTable> table, std::string table_path)
    : spm_(std::move(spm)), table_(std::move(table)), table_path_(std::move(table_path)) {}

void Vocabulary::encode_ids(std::string_view text, std::vector<int>& out) const {
  if (!table_) {
    spm_.encode_ids(text, out);
    return;
  }
  std::vector<std::string> pieces;
  spm_.encode_pieces(text, pieces);
  out.clear();
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
  return spm_.decode_pieces(pieces);
}

const std::string& Vocabulary::id_to_piece(int id) const {
  if (!table_) return spm_.id_to_piece(id);
  if (id < 0 || id >= size())
    throw FormatError(table_path_ + ": id " + std::to_string(id) + " is outside [0, " + std::to_string(size()) + ")");
  return table_->pieces[static_cast<size_t>(id)];
}

int Vocabulary::piece_to_id(std::string_view piece) const {
  if (!table_) return spm_.piece_to_id(piece);
  const auto it = table_->ids.find(std::string(piece));
  return it == table_->ids.end() ? table_->unk_id : it->second;
}

int Vocabulary::size() const { return table_ ? static_cast<int>(table_->pieces.size()) : spm_.piece_size(); }

std::string Vocabulary::describe() const { return table_ ? spm_.path() + " + " + table_path_ : spm_.path(); }

}  // namespace tt::io
