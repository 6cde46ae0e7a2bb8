#include "io/json_file.h"

#include <fstream>

#include "util/error.h"
#include "util/file_kind.h"

namespace tt::io {

nlohmann::json read_json_file(const std::string& path, const std::string& hint) {
  if (util::is_special_file(path))  // a FIFO would hang the reader
    throw IoError(path + ": is " + util::file_kind(path) + ", expected a JSON file");
  std::ifstream in(path);
  if (!in) throw IoError("cannot open " + path, hint);
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(path + ": not valid JSON (" + e.what() + ")");
  }
}

}  // namespace tt::io
