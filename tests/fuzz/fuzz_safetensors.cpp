// The safetensors reader on arbitrary bytes: it must accept or refuse with a tt::Error, never crash,
// over-read or allocate without bound. Every tensor it accepts is read back.
#include <cstdint>
#include <vector>

#include "fuzz_support.h"
#include "io/safetensors.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = tt::fuzz::input_file(data, size);
  try {
    tt::io::SafetensorsReader reader(path);
    std::vector<char> buffer;
    for (const auto& entry : reader.tensors()) {
      if (entry.end < entry.begin || entry.end - entry.begin > size) __builtin_trap();  // validated up front
      buffer.resize(entry.end - entry.begin);
      reader.read_raw(entry, buffer.data());
      if (entry.dtype == tt::io::StDType::f32) reader.read_f32(entry.name);
      if (entry.dtype != tt::io::StDType::f32) reader.read_i64(entry.name);
    }
  } catch (const tt::Error&) {
  }
  return 0;
}
