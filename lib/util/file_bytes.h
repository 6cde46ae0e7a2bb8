// A whole file as bytes, and a file written whole from bytes (all-or-nothing, through util::AtomicFile).
#pragma once

#include <string>

namespace tt::util {

// Throws tt::IoError naming `path` when it cannot be opened or read.
std::string read_file_bytes(const std::string& path);
// Written beside `path`, fsync'ed and renamed onto it (util/atomic_file.h). Throws tt::IoError.
void write_file_bytes(const std::string& path, const std::string& bytes);

}  // namespace tt::util
