#include "util/file_kind.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "util/error.h"

namespace fs = std::filesystem;

namespace tt::util {

namespace {

std::string kind_name(const fs::file_status& s) {
  switch (s.type()) {
    case fs::file_type::regular: return "a regular file";
    case fs::file_type::directory: return "a directory";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

}  // namespace

std::string file_kind(const std::string& path) {
  std::error_code ec;
  return kind_name(fs::status(path, ec));
}

bool is_special_file(const std::string& path) {
  std::error_code ec;
  const fs::file_status s = fs::status(path, ec);
  return fs::exists(s) && !fs::is_regular_file(s) && !fs::is_directory(s);
}

bool regular_file_exists(const std::string& path) {
  std::error_code ec;
  const fs::file_status s = fs::status(path, ec);
  if (fs::exists(s)) return fs::is_regular_file(s);
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
    throw IoError(path + ": " + ec.message());
  return false;
}

void require_regular_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  const fs::file_status s = fs::status(path, ec);
  if (!fs::exists(s)) {
    const int error = ec ? ec.value() : ENOENT;
    throw IoError("cannot open " + path + ": " + std::strerror(error));
  }
  if (!fs::is_regular_file(s)) throw IoError(path + ": is " + kind_name(s) + ", expected " + what);
}

}  // namespace tt::util
