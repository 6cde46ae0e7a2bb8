#include "io/ct2_model_file.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "util/atomic_file.h"
#include "util/error.h"

namespace tt::io {

namespace {

size_t type_size(Ct2Type t) {
  switch (t) {
    case Ct2Type::int8: return 1;
    case Ct2Type::int16:
    case Ct2Type::float16:
    case Ct2Type::bfloat16: return 2;
    case Ct2Type::float32:
    case Ct2Type::int32: return 4;
  }
  return 4;
}

// CTranslate2 compares values (numpy's array_equal): for floats, 0.0 equals -0.0.
bool same_values(const Ct2Variable& a, const Ct2Variable& b) {
  if (a.type != b.type || a.shape != b.shape || a.bytes.size() != b.bytes.size()) return false;
  if (a.type != Ct2Type::float32) return a.bytes == b.bytes;
  const size_t n = a.bytes.size() / 4;
  for (size_t i = 0; i < n; ++i) {
    float x, y;
    std::memcpy(&x, a.bytes.data() + 4 * i, 4);
    std::memcpy(&y, b.bytes.data() + 4 * i, 4);
    if (!(x == y)) return false;
  }
  return true;
}

class Writer {
 public:
  explicit Writer(std::ostream& out) : out_(out) {}
  template <typename T>
  void put(T value) {
    out_.write(reinterpret_cast<const char*>(&value), sizeof value);  // x86-64 and AArch64: little-endian
  }
  void string(const std::string& s) {  // u16 length including the NUL, the bytes, NUL
    put(static_cast<uint16_t>(s.size() + 1));
    out_.write(s.data(), static_cast<std::streamsize>(s.size()));
    put(uint8_t{0});
  }
  void bytes(const std::vector<uint8_t>& b) { out_.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size())); }

 private:
  std::ostream& out_;
};

uint32_t field(uint64_t value, const std::string& variable, const char* what) {
  if (value > std::numeric_limits<uint32_t>::max())
    throw FormatError("CTranslate2 model: variable '" + variable + "' has " + what + " " + std::to_string(value) +
                      ", over the format's 32-bit limit");
  return static_cast<uint32_t>(value);
}

}  // namespace

Ct2Variable Ct2Variable::f32(std::string name, std::vector<int64_t> shape, const float* values) {
  Ct2Variable v{std::move(name), std::move(shape), Ct2Type::float32, {}};
  int64_t n = 1;
  for (int64_t d : v.shape) n *= d;
  v.bytes.resize(static_cast<size_t>(n) * 4);
  if (n > 0) std::memcpy(v.bytes.data(), values, v.bytes.size());
  return v;
}

Ct2Variable Ct2Variable::scalar_i8(std::string name, int8_t value) {
  return Ct2Variable{std::move(name), {}, Ct2Type::int8, {static_cast<uint8_t>(value)}};
}

Ct2Variable Ct2Variable::scalar_i16(std::string name, int16_t value) {
  Ct2Variable v{std::move(name), {}, Ct2Type::int16, std::vector<uint8_t>(2)};
  std::memcpy(v.bytes.data(), &value, 2);
  return v;
}

Ct2Written write_ct2_model_bin(const std::string& path, const std::string& spec_name, uint32_t spec_revision,
                         std::vector<Ct2Variable> variables) {
  std::sort(variables.begin(), variables.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (size_t i = 1; i < variables.size(); ++i)
    if (variables[i].name == variables[i - 1].name)
      throw InternalError("write_ct2_model_bin: variable '" + variables[i].name + "' given twice");
  for (const auto& v : variables) {
    size_t n = 1;
    for (int64_t d : v.shape) n *= static_cast<size_t>(d);
    if (v.bytes.size() != n * type_size(v.type))
      throw InternalError("write_ct2_model_bin: variable '" + v.name + "' has the wrong byte count");
  }
  // alias_of[i]: the first variable equal to variable i, or i itself.
  std::vector<size_t> alias_of(variables.size());
  for (size_t i = 0; i < variables.size(); ++i) {
    alias_of[i] = i;
    if (variables[i].shape.empty()) continue;
    for (size_t j = 0; j < i; ++j)
      if (alias_of[j] == j && same_values(variables[j], variables[i])) {
        alias_of[i] = j;
        break;
      }
  }
  util::AtomicFile file(path);
  Writer w(file.stream());
  w.put(uint32_t{6});
  w.string(spec_name);
  w.put(spec_revision);
  uint32_t stored = 0;
  for (size_t i = 0; i < variables.size(); ++i) stored += alias_of[i] == i;
  w.put(stored);
  for (size_t i = 0; i < variables.size(); ++i) {
    if (alias_of[i] != i) continue;
    const Ct2Variable& v = variables[i];
    w.string(v.name);
    w.put(static_cast<uint8_t>(v.shape.size()));
    for (int64_t d : v.shape) w.put(field(static_cast<uint64_t>(d), v.name, "a dimension"));
    w.put(static_cast<uint8_t>(v.type));
    w.put(field(v.bytes.size(), v.name, "a byte count"));
    w.bytes(v.bytes);
  }
  w.put(static_cast<uint32_t>(variables.size() - stored));
  for (size_t i = 0; i < variables.size(); ++i)
    if (alias_of[i] != i) {
      w.string(variables[i].name);
      w.string(variables[alias_of[i]].name);
    }
  file.commit();
  return Ct2Written{stored, static_cast<int64_t>(variables.size() - stored)};
}

}  // namespace tt::io
