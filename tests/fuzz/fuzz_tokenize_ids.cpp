// tt-tokenize's id-line parser (decode --format id): ids or a tt::FormatError, never a crash; parsed ids
// printed back parse to the same ids.
#include <cstdint>
#include <string>
#include <vector>

#include "data/spm_ids.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string line(reinterpret_cast<const char*>(data), size);
  std::vector<int> ids, again;
  try {
    tt::data::parse_id_line(line, ids);
  } catch (const tt::FormatError&) {
    return 0;
  }
  std::string printed;
  for (int id : ids) printed += std::to_string(id) + " ";
  tt::data::parse_id_line(printed, again);
  if (again != ids) __builtin_trap();
  return 0;
}
