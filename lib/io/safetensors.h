// safetensors (https://github.com/huggingface/safetensors), tt's weight format: an 8-byte little-endian
// header length N, N bytes of JSON {"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
// "__metadata__": {str: str}}, then the tensor bytes (offsets relative to the end of the header).
// Our own small reader/writer: tt needs F32 (weights, optimizer state), I32/I64 (steps, ids), and I8 / BF16
// (weights stored quantized by tt-convert quantize).
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace tt::io {

enum class StDType { f32, i32, i64, i8, bf16 };

std::string st_dtype_name(StDType t);  // "F32", "I32", "I64", "I8", "BF16"
size_t st_dtype_size(StDType t);

// One tensor to write; `data` points to numel(shape) * size(dtype) bytes on the host.
struct TensorRef {
  std::string name;
  StDType dtype = StDType::f32;
  std::vector<int64_t> shape;
  const void* data = nullptr;
};

// Writes atomically (temp file + fsync + rename): a crash never leaves half a file. Names must be unique
// and not "__metadata__". Throws tt::IoError when the file cannot be written.
void write_safetensors(const std::string& path, const std::vector<TensorRef>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// Throws tt::FormatError naming `path`, `tensor`, the index (and row, column of a matrix) and the value
// of the first NaN or infinity in `values` (`shape` as stored). A non-finite weight makes every score
// that reads it NaN; refused at load, it never reaches the search.
void require_finite(const float* values, const std::vector<int64_t>& shape, const std::string& path,
                    const std::string& tensor, const std::string& hint);

struct TensorEntry {
  std::string name;
  StDType dtype = StDType::f32;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // byte offsets into the data section
  uint64_t end = 0;
  int64_t numel() const;
  std::string shape_str() const;  // "[512, 512]"
};

// Opens and validates a file up front (header length, JSON, dtypes, shapes, offsets within the file and
// not overlapping, byte size == shape x dtype); tensor data is read on demand. Every problem is a
// tt::FormatError (tt::IoError if the file cannot be opened) naming the file and, where it applies, the tensor.
class SafetensorsReader {
 public:
  explicit SafetensorsReader(std::string path);

  const std::string& path() const { return path_; }
  const std::vector<TensorEntry>& tensors() const { return entries_; }  // in file order
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const TensorEntry* find(const std::string& name) const;  // nullptr if absent
  // Throws FormatError "<file>: no tensor named '<name>'" if absent.
  const TensorEntry& get(const std::string& name) const;

  // Reads a tensor's bytes into `dst` (entry.end - entry.begin bytes).
  void read_raw(const TensorEntry& entry, void* dst);
  // Typed reads; a dtype other than the one asked for is a FormatError naming the tensor. I32 also
  // accepts I64 data whose values fit (ids written by PyTorch).
  std::vector<float> read_f32(const std::string& name);
  std::vector<int32_t> read_i32(const std::string& name);
  std::vector<int64_t> read_i64(const std::string& name);
  // Checks that tensor `name` exists with exactly this dtype and shape (a mismatch against the model is
  // a FormatError naming file, tensor, expected and found), and returns it.
  const TensorEntry& expect(const std::string& name, StDType dtype, const std::vector<int64_t>& shape) const;

 private:
  [[noreturn]] void fail(const std::string& message) const;
  std::string path_;
  std::ifstream in_;
  uint64_t data_start_ = 0;
  std::vector<TensorEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace tt::io
