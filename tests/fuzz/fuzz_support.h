// Shared by the fuzz targets: inputs as files (for readers that take a path) and the rule that a
// tt::Error is a correct answer to bad input while anything else (a crash, a sanitizer report, another
// exception type escaping) is a finding.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace tt::fuzz {

// A file holding the current input, rewritten for every run (one per process).
inline const std::string& input_file(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/tt-fuzz-" + std::to_string(::getpid()) + ".bin";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) __builtin_trap();
  if (size && std::fwrite(data, 1, size, f) != size) __builtin_trap();
  std::fclose(f);
  return path;
}

}  // namespace tt::fuzz
