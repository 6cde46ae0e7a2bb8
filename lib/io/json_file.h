#pragma once
// Reading a JSON file with errors that name it. Its own file so that small readers (piece tables, the
// fuzzers) need only util, not the model directory code and the backend behind it.
#include <nlohmann/json.hpp>
#include <string>

namespace tt::io {

// The JSON in `path`: an unreadable file is a tt::IoError with `hint`, bad JSON a tt::FormatError naming the file.
nlohmann::json read_json_file(const std::string& path, const std::string& hint = {});

}  // namespace tt::io
