// CTranslate2's model.bin (binary version 6, what its converters write since CTranslate2 3.0): a little-
// endian header (version, spec name, spec revision), then every variable by name (rank, dims, type id,
// byte count, bytes), then aliases (a name that reads another variable's data). Variables are written in
// name order, and a variable equal to one before it (same type, shape and values) becomes an alias of the
// first, as CTranslate2's own converters do: a tied embedding is stored once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tt::io {

// CTranslate2's DataType ids (include/ctranslate2/types.h).
enum class Ct2Type : uint8_t { float32 = 0, int8 = 1, int16 = 2, int32 = 3, float16 = 4, bfloat16 = 5 };

struct Ct2Variable {
  std::string name;             // "encoder/layer_0/ffn/linear_0/weight"
  std::vector<int64_t> shape;   // empty: a scalar (never aliased)
  Ct2Type type = Ct2Type::float32;
  std::vector<uint8_t> bytes;   // numel(shape) x the type's size, little-endian

  static Ct2Variable f32(std::string name, std::vector<int64_t> shape, const float* values);
  static Ct2Variable scalar_i8(std::string name, int8_t value);  // flags: 0 / 1
  static Ct2Variable scalar_i16(std::string name, int16_t value);
};

struct Ct2Written {
  int64_t stored = 0, aliases = 0;
};

// Writes `variables` (unique names) as a model.bin at `path`, atomically. A dimension or a byte count
// over 2^32 - 1 (the format's field width) is a tt::FormatError naming the variable.
Ct2Written write_ct2_model_bin(const std::string& path, const std::string& spec_name, uint32_t spec_revision,
                         std::vector<Ct2Variable> variables);

}  // namespace tt::io
