#include "io/average.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "io/model_dir.h"
#include "io/output_dir.h"
#include "io/quantized_model.h"
#include "io/safetensors.h"
#include "nn/config.h"
#include "util/atomic_dir.h"
#include "util/atomic_file.h"
#include "util/file_bytes.h"
#include "util/error.h"
#include "util/version.h"

namespace tt::io {

namespace fs = std::filesystem;

namespace {

// "run/checkpoints/step-000100/" -> "run/checkpoints/step-000100" (for messages and the metadata).
std::string clean_path(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  if (p.has_parent_path() && p.filename().empty()) p = p.parent_path();
  return p.string();
}

std::string join(const std::string& dir, const std::string& name) { return (fs::path(dir) / name).string(); }

using util::read_file_bytes;
// Through AtomicFile: the copy is fsync'ed before the directory holding it is renamed into place.
using util::write_file_bytes;

struct Source {
  std::string dir;     // cleaned, as given
  std::string config;  // <dir>/config.json
  nlohmann::json full;
  nlohmann::json model;  // normalised "model" section (defaults filled in)
};

Source read_source(const std::string& given) {
  Source s;
  s.dir = clean_path(given);
  s.config = join(s.dir, config_file_name);
  std::error_code ec;
  if (!fs::exists(s.config, ec) && fs::is_directory(join(s.dir, "checkpoints"), ec))
    throw IoError(s.dir + " is a training run directory, not a model directory",
                  "average its checkpoints: name them (" + join(s.dir, "checkpoints/step-*") +
                      ") or select the last or best ones");
  s.model = nn::to_json(load_model_config(s.dir, &s.full));
  if (const std::string stored = stored_weight_type(s.full, s.config); stored != "float32")
    throw FormatError(s.dir + ": the weights are stored as " + stored + " (tt-convert quantize)",
                      "average the float32 checkpoints, then quantize the average");
  return s;
}

// The vocabulary files a config names: plain file names inside the model directory.
std::vector<std::string> vocab_files(const Source& s) {
  std::vector<std::string> names;
  auto it = s.full.find("vocab");
  if (it == s.full.end() || it->is_null()) return names;
  if (!it->is_object()) throw FormatError(s.config + ": \"vocab\" must be an object of file names");
  for (const auto& [key, value] : it->items()) {
    if (!value.is_string()) throw FormatError(s.config + ": vocab." + key + " must be a file name (a string)");
    const std::string name = value.get<std::string>();
    if (name.empty() || name == "." || name == ".." || fs::path(name).filename().string() != name)
      throw FormatError(s.config + ": vocab." + key + " = \"" + name + "\" is not a file name inside the directory");
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

void check_same_config(const Source& first, const Source& s) {
  if (s.model == first.model) return;
  for (const auto& [key, value] : first.model.items()) {
    auto other = s.model.find(key);
    if (other == s.model.end() || *other != value)
      throw FormatError(s.config + ": model." + key + " is " + (other == s.model.end() ? "absent" : other->dump()) +
                            ", but " + value.dump() + " in " + first.config,
                        "only checkpoints of the same architecture can be averaged");
  }
  throw FormatError(s.config + ": \"model\" differs from " + first.config,
                    "only checkpoints of the same architecture can be averaged");
}

void check_same_vocab(const Source& first, const Source& s, const std::vector<std::string>& names,
                      const std::vector<std::string>& first_bytes) {
  const nlohmann::json none;
  const nlohmann::json& a = first.full.contains("vocab") ? first.full["vocab"] : none;
  const nlohmann::json& b = s.full.contains("vocab") ? s.full["vocab"] : none;
  if (a != b)
    throw FormatError(s.config + ": \"vocab\" is " + b.dump() + ", but " + a.dump() + " in " + first.config,
                      "only models with the same vocabulary can be averaged");
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string path = join(s.dir, names[i]);
    if (read_file_bytes(path) != first_bytes[i])
      throw FormatError(path + " differs from " + join(first.dir, names[i]),
                        "only models with the same vocabulary can be averaged");
  }
}

void check_same_tensors(const SafetensorsReader& first, const SafetensorsReader& r) {
  for (const auto& e : first.tensors()) {
    const TensorEntry* f = r.find(e.name);
    if (!f)
      throw FormatError(r.path() + ": no tensor '" + e.name + "' (it is in " + first.path() + ")",
                        "only checkpoints of the same model can be averaged");
    if (f->dtype != e.dtype || f->shape != e.shape)
      throw FormatError(r.path() + ": tensor '" + e.name + "' is " + st_dtype_name(f->dtype) + " " + f->shape_str() +
                            ", but " + st_dtype_name(e.dtype) + " " + e.shape_str() + " in " + first.path(),
                        "only checkpoints of the same model can be averaged");
  }
  for (const auto& f : r.tensors())
    if (!first.find(f.name))
      throw FormatError(r.path() + ": tensor '" + f.name + "' is not in " + first.path(),
                        "only checkpoints of the same model can be averaged");
}

}  // namespace

AverageResult average_model_dirs(const std::string& out_given, const std::vector<std::string>& sources,
                                 const AverageOptions& options) {
  if (sources.empty()) throw Error("nothing to average: no model directories given");
  const std::string out = clean_path(out_given);
  std::error_code ec;

  // 1. Check everything before writing anything.
  std::vector<Source> srcs;
  for (const auto& given : sources) srcs.push_back(read_source(given));
  const fs::path out_canonical = fs::weakly_canonical(out, ec);
  for (size_t i = 0; i < srcs.size(); ++i) {
    const fs::path canonical = fs::weakly_canonical(srcs[i].dir, ec);
    if (canonical == out_canonical) throw Error("the output " + out + " is also a source; write the average elsewhere");
    for (size_t j = 0; j < i; ++j)
      if (canonical == fs::weakly_canonical(srcs[j].dir, ec))
        throw Error(srcs[i].dir + " is given twice (as " + srcs[j].dir + " and " + srcs[i].dir + ")",
                    "each checkpoint counts once in the average; name it once");
  }
  const std::vector<std::string> vocab = vocab_files(srcs[0]);
  std::vector<std::string> vocab_bytes;
  for (const auto& name : vocab) vocab_bytes.push_back(read_file_bytes(join(srcs[0].dir, name)));
  const std::string config_bytes = read_file_bytes(srcs[0].config);
  for (size_t i = 1; i < srcs.size(); ++i) {
    check_same_config(srcs[0], srcs[i]);
    check_same_vocab(srcs[0], srcs[i], vocab, vocab_bytes);
  }
  std::vector<std::unique_ptr<SafetensorsReader>> readers;
  for (const auto& s : srcs) readers.push_back(std::make_unique<SafetensorsReader>(join(s.dir, weights_file_name)));
  for (size_t i = 1; i < readers.size(); ++i) check_same_tensors(*readers[0], *readers[i]);
  for (const auto& e : readers[0]->tensors())
    if (e.dtype != StDType::f32)
      throw FormatError(readers[0]->path() + ": tensor '" + e.name + "' is " + st_dtype_name(e.dtype) +
                            "; only F32 weights can be averaged",
                        "is this a model.safetensors written by tt?");
  check_output_dir(out, options.replace, {config_file_name}, "a tt model directory");

  // 2. The mean, tensor by tensor: sums in double (float would drop small terms), rounded to F32 once.
  AverageResult result;
  const auto& entries = readers[0]->tensors();
  std::vector<std::vector<float>> means(entries.size());
  std::vector<float> buffer;
  std::vector<double> sum;
  const double n = static_cast<double>(readers.size());
  for (size_t t = 0; t < entries.size(); ++t) {
    const size_t numel = static_cast<size_t>(entries[t].numel());
    buffer.resize(numel);
    sum.assign(numel, 0.0);
    for (auto& reader : readers) {
      reader->read_raw(reader->get(entries[t].name), buffer.data());
      require_finite(buffer.data(), entries[t].shape, reader->path(), entries[t].name,
                     "the checkpoint diverged; leave it out of the average");
      for (size_t k = 0; k < numel; ++k) sum[k] += buffer[k];
    }
    means[t].resize(numel);
    for (size_t k = 0; k < numel; ++k) means[t][k] = static_cast<float>(sum[k] / n);
    result.parameters += static_cast<int64_t>(numel);
  }
  result.tensors = static_cast<int64_t>(entries.size());
  result.vocab_files = vocab;

  // 3. Write a temporary sibling directory, then rename it into place (util/atomic_dir.h).
  util::AtomicDirectory dir(out);
  std::vector<TensorRef> refs;
  for (size_t t = 0; t < entries.size(); ++t)
    refs.push_back(TensorRef{entries[t].name, StDType::f32, entries[t].shape, means[t].data()});
  nlohmann::json from = nlohmann::json::array();
  for (const auto& s : srcs) from.push_back(s.dir);
  write_safetensors(dir.file(weights_file_name), refs,
                    {{"format", "pt"},
                     {"averaged_from", from.dump()},
                     {"tt_average", tt::version()},
                     {"tt_version", tt::version()}});
  write_file_bytes(dir.file(config_file_name), config_bytes);
  for (size_t i = 0; i < vocab.size(); ++i) write_file_bytes(dir.file(vocab[i]), vocab_bytes[i]);
  dir.commit();
  return result;
}

}  // namespace tt::io
