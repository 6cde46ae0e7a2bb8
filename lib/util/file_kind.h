// What kind of file a path names. Model files (weights, configs, SentencePiece models) are read with
// sizes and seeks, so they must be regular files: a FIFO would hang the reader and a device would never
// end. Text inputs (-i) may be anything that can be read.
#pragma once

#include <string>

namespace tt::util {

// "a FIFO", "a character device", "a directory", ... for messages; "a regular file" when it is one.
std::string file_kind(const std::string& path);

// True if `path` names an existing file that is neither a regular file nor a directory (a FIFO, a device,
// a socket), following symlinks.
bool is_special_file(const std::string& path);

// True if `path` names (a symlink to) a regular file, false if nothing is there; a name the system
// refuses (too long, a symlink loop, no permission on a directory above) is a tt::IoError naming it.
// (std::filesystem's own one-argument queries throw std::filesystem_error, which is not a tt::Error.)
bool regular_file_exists(const std::string& path);

// Throws tt::IoError naming `path` unless it is (a symlink to) a regular file: missing, a directory,
// a FIFO, a device or a socket. `what` names the expected content ("a .safetensors file").
void require_regular_file(const std::string& path, const std::string& what);

}  // namespace tt::util
