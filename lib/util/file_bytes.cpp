#include "util/file_bytes.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "util/atomic_file.h"
#include "util/error.h"

namespace tt::util {

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open " + path + ": " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw IoError("cannot read " + path);
  return bytes;
}

void write_file_bytes(const std::string& path, const std::string& bytes) {
  AtomicFile file(path);
  file.stream().write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.commit();
}

}  // namespace tt::util
