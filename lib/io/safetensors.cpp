#include "io/safetensors.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/file_kind.h"

namespace tt::io {

static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

namespace {

// The reference implementation refuses headers over 100 MB; a bigger length is a corrupt file, and
// checking it first keeps a garbage length from turning into a huge allocation.
constexpr uint64_t max_header_bytes = 100'000'000;

bool parse_dtype(const std::string& s, StDType* out) {
  if (s == "F32") *out = StDType::f32;
  else if (s == "I32") *out = StDType::i32;
  else if (s == "I64") *out = StDType::i64;
  else if (s == "I8") *out = StDType::i8;
  else if (s == "BF16") *out = StDType::bf16;
  else return false;
  return true;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

std::string st_dtype_name(StDType t) {
  switch (t) {
    case StDType::f32: return "F32";
    case StDType::i32: return "I32";
    case StDType::i64: return "I64";
    case StDType::i8: return "I8";
    case StDType::bf16: return "BF16";
  }
  return "?";
}

size_t st_dtype_size(StDType t) {
  switch (t) {
    case StDType::f32: return 4;
    case StDType::i32: return 4;
    case StDType::i64: return 8;
    case StDType::i8: return 1;
    case StDType::bf16: return 2;
  }
  return 0;
}

int64_t TensorEntry::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string TensorEntry::shape_str() const { return io::shape_str(shape); }

// ---- writer -------------------------------------------------------------------------------------------

void write_safetensors(const std::string& path, const std::vector<TensorRef>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  std::vector<uint64_t> sizes;
  for (const auto& t : tensors) {
    if (t.name.empty() || t.name == "__metadata__" || header.contains(t.name))
      throw Error(path + ": cannot write tensor named '" + t.name + "' (empty, reserved or duplicate name)");
    uint64_t n = 1;
    for (int64_t d : t.shape) {
      if (d < 0) throw Error(path + ": tensor '" + t.name + "' has a negative dimension");
      n *= static_cast<uint64_t>(d);
    }
    const uint64_t bytes = n * st_dtype_size(t.dtype);
    header[t.name] = {{"dtype", st_dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    sizes.push_back(bytes);
    offset += bytes;
  }
  std::string text = header.dump();
  // Pad with spaces so the data starts 8-byte aligned, as the reference writer does (mmap readers rely on it).
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t length = text.size();

  util::AtomicFile file(path);
  std::ostream& out = file.stream();
  out.write(reinterpret_cast<const char*>(&length), 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (size_t i = 0; i < tensors.size(); ++i)
    if (sizes[i]) out.write(static_cast<const char*>(tensors[i].data), static_cast<std::streamsize>(sizes[i]));
  if (!out) throw IoError(path + ": write failed", "check free disk space and permissions");
  file.commit();
}

void require_finite(const float* values, const std::vector<int64_t>& shape, const std::string& path,
                    const std::string& tensor, const std::string& hint) {
  size_t numel = 1;
  for (int64_t d : shape) numel *= static_cast<size_t>(d);
  for (size_t k = 0; k < numel; ++k) {
    if (std::isfinite(values[k])) continue;
    std::string where = "index " + std::to_string(k);
    if (shape.size() == 2)
      where += " (row " + std::to_string(k / shape[1]) + ", column " + std::to_string(k % shape[1]) + ")";
    const char* value = std::isnan(values[k]) ? "nan" : values[k] > 0 ? "inf" : "-inf";
    throw FormatError(path + ": tensor '" + tensor + "' holds a non-finite value (" + value + ") at " + where, hint);
  }
}

// ---- reader -------------------------------------------------------------------------------------------

void SafetensorsReader::fail(const std::string& message) const {
  throw FormatError(path_ + ": " + message, "the file is truncated or not a safetensors file; re-create it");
}

SafetensorsReader::SafetensorsReader(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  // A FIFO would hang the reader, a device never end: weights are read from regular files only.
  util::require_regular_file(path_, "a .safetensors file");
  in_.open(path_, std::ios::binary);
  if (!in_) throw IoError("cannot open " + path_ + ": " + std::strerror(errno));
  const uint64_t file_size = std::filesystem::file_size(path_, ec);
  if (ec) throw IoError("cannot read the size of " + path_ + ": " + ec.message());
  if (file_size < 8) fail("file has " + std::to_string(file_size) + " bytes, too short for a safetensors header");

  uint64_t header_length = 0;
  in_.read(reinterpret_cast<char*>(&header_length), 8);
  if (!in_) fail("cannot read the header length");
  if (header_length > max_header_bytes || header_length > file_size - 8)
    fail("header length " + std::to_string(header_length) + " exceeds the file size (" +
         std::to_string(file_size) + " bytes)");
  std::string text(header_length, '\0');
  in_.read(text.data(), static_cast<std::streamsize>(header_length));
  if (!in_) fail("cannot read the header");
  data_start_ = 8 + header_length;
  const uint64_t data_size = file_size - data_start_;

  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail(std::string("header is not valid JSON (") + e.what() + ")");
  }
  if (!header.is_object()) fail("header is not a JSON object");

  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) fail("__metadata__ is not an object");
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string()) fail("__metadata__ value '" + k + "' is not a string");
        metadata_[k] = v.get<std::string>();
      }
      continue;
    }
    const std::string where = "tensor '" + name + "': ";
    if (!value.is_object()) fail(where + "entry is not an object");
    TensorEntry e;
    e.name = name;
    auto dtype = value.find("dtype");
    if (dtype == value.end() || !dtype->is_string()) fail(where + "missing dtype");
    if (!parse_dtype(dtype->get<std::string>(), &e.dtype))
      fail(where + "unsupported dtype " + dtype->dump() + " (tt reads F32, BF16, I8, I32, I64)");
    auto shape = value.find("shape");
    if (shape == value.end() || !shape->is_array()) fail(where + "missing shape");
    uint64_t numel = 1;
    for (const auto& d : *shape) {
      if (!d.is_number_unsigned()) fail(where + "shape " + shape->dump() + " is not a list of sizes");
      const uint64_t n = d.get<uint64_t>();
      if (n > (uint64_t{1} << 40) || (n && numel > std::numeric_limits<uint64_t>::max() / n / 8))
        fail(where + "shape " + shape->dump() + " is too large");
      numel *= n;
      e.shape.push_back(static_cast<int64_t>(n));
    }
    auto offsets = value.find("data_offsets");
    if (offsets == value.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
        !(*offsets)[1].is_number_unsigned())
      fail(where + "data_offsets must be [begin, end]");
    e.begin = (*offsets)[0].get<uint64_t>();
    e.end = (*offsets)[1].get<uint64_t>();
    if (e.begin > e.end || e.end > data_size)
      fail(where + "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
           "] lie outside the data section (" + std::to_string(data_size) + " bytes)");
    if (e.end - e.begin != numel * st_dtype_size(e.dtype))
      fail(where + "holds " + std::to_string(e.end - e.begin) + " bytes but shape " + e.shape_str() + " of " +
           st_dtype_name(e.dtype) + " needs " + std::to_string(numel * st_dtype_size(e.dtype)));
    entries_.push_back(std::move(e));
  }

  std::vector<const TensorEntry*> by_offset;
  for (const auto& e : entries_) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const TensorEntry* a, const TensorEntry* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->begin < by_offset[i - 1]->end)
      fail("tensors '" + by_offset[i - 1]->name + "' and '" + by_offset[i]->name + "' overlap");
  // File order = data order, so errors and listings follow the writer's order, not JSON's sorted keys.
  std::sort(entries_.begin(), entries_.end(), [](const TensorEntry& a, const TensorEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.name < b.name;
  });
}

const TensorEntry* SafetensorsReader::find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

const TensorEntry& SafetensorsReader::get(const std::string& name) const {
  const TensorEntry* e = find(name);
  if (!e)
    throw FormatError(path_ + ": no tensor named '" + name + "'",
                      "the file was written for a different model or configuration");
  return *e;
}

void SafetensorsReader::read_raw(const TensorEntry& entry, void* dst) {
  const uint64_t bytes = entry.end - entry.begin;
  if (bytes == 0) return;
  in_.clear();
  in_.seekg(static_cast<std::streamoff>(data_start_ + entry.begin));
  in_.read(static_cast<char*>(dst), static_cast<std::streamsize>(bytes));
  if (!in_) fail("tensor '" + entry.name + "': cannot read its data (file changed or truncated while reading?)");
}

const TensorEntry& SafetensorsReader::expect(const std::string& name, StDType dtype,
                                             const std::vector<int64_t>& shape) const {
  const TensorEntry& e = get(name);
  if (e.dtype != dtype || e.shape != shape)
    throw FormatError(path_ + ": tensor '" + name + "' is " + st_dtype_name(e.dtype) + " " + e.shape_str() +
                          ", expected " + st_dtype_name(dtype) + " " + shape_str(shape),
                      "the weights do not match the model's config.json");
  return e;
}

std::vector<float> SafetensorsReader::read_f32(const std::string& name) {
  const TensorEntry& e = get(name);
  if (e.dtype != StDType::f32) fail("tensor '" + name + "' is " + st_dtype_name(e.dtype) + ", expected F32");
  std::vector<float> out(static_cast<size_t>(e.numel()));
  read_raw(e, out.data());
  return out;
}

std::vector<int64_t> SafetensorsReader::read_i64(const std::string& name) {
  const TensorEntry& e = get(name);
  if (e.dtype == StDType::i64) {
    std::vector<int64_t> out(static_cast<size_t>(e.numel()));
    read_raw(e, out.data());
    return out;
  }
  if (e.dtype == StDType::i32) {
    std::vector<int32_t> v(static_cast<size_t>(e.numel()));
    read_raw(e, v.data());
    return std::vector<int64_t>(v.begin(), v.end());
  }
  fail("tensor '" + name + "' is " + st_dtype_name(e.dtype) + ", expected I64 or I32");
}

std::vector<int32_t> SafetensorsReader::read_i32(const std::string& name) {
  const TensorEntry& e = get(name);
  if (e.dtype == StDType::i32) {
    std::vector<int32_t> out(static_cast<size_t>(e.numel()));
    read_raw(e, out.data());
    return out;
  }
  if (e.dtype != StDType::i64) fail("tensor '" + name + "' is " + st_dtype_name(e.dtype) + ", expected I32 or I64");
  std::vector<int64_t> wide = read_i64(name);
  std::vector<int32_t> out(wide.size());
  for (size_t i = 0; i < wide.size(); ++i) {
    if (wide[i] < std::numeric_limits<int32_t>::min() || wide[i] > std::numeric_limits<int32_t>::max())
      fail("tensor '" + name + "' value " + std::to_string(wide[i]) + " at index " + std::to_string(i) +
           " does not fit in 32 bits");
    out[i] = static_cast<int32_t>(wide[i]);
  }
  return out;
}

}  // namespace tt::io
