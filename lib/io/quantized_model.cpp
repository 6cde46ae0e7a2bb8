#include "io/quantized_model.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>

#include "backend/quantized_weight.h"
#include "io/model_dir.h"
#include "io/model_vocab.h"
#include "io/output_dir.h"
#include "io/safetensors.h"
#include "util/atomic_dir.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/file_bytes.h"
#include "util/version.h"

namespace tt::io {

namespace fs = std::filesystem;

bool is_product_weight(const std::string& name, size_t rank) {
  const std::string suffix = ".weight";
  return rank == 2 && name.rfind("embeddings.", 0) != 0 && name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string stored_weight_type(const nlohmann::json& config, const std::string& where) {
  const auto q = config.find("quantization");
  if (q == config.end()) return "float32";
  const auto type = q->is_object() ? q->find("type") : q->end();
  if (type == q->end() || !type->is_string() || (*type != "int8" && *type != "bf16"))
    throw FormatError(where + ": \"quantization\" must be {\"type\": \"int8\"} or {\"type\": \"bf16\"}",
                      "restore the config.json tt-convert quantize wrote");
  return type->get<std::string>();
}

std::shared_ptr<const backend::QuantizedWeight> read_quantized_weight(SafetensorsReader& reader, const std::string& name,
                                                                      const std::vector<int64_t>& shape) {
  const TensorEntry& e = reader.get(name);
  if (shape.size() != 2 || e.shape != shape)
    throw FormatError(reader.path() + ": tensor '" + name + "' is " + st_dtype_name(e.dtype) + " " + e.shape_str() +
                      ", but the model's weight has another shape");
  auto w = std::make_shared<backend::QuantizedWeight>();
  w->N = static_cast<int>(shape[0]);
  w->K = static_cast<int>(shape[1]);
  const std::string hint = "the file is damaged; quantize the float32 model again";
  if (e.dtype == StDType::i8) {
    w->type = backend::MatmulPrecision::int8;
    w->s8.resize(static_cast<size_t>(e.numel()));
    reader.read_raw(e, w->s8.data());
    const std::string scale = scale_tensor_name(name);
    if (!reader.find(scale))
      throw FormatError(reader.path() + ": the int8 tensor '" + name + "' has no scales ('" + scale + "')", hint);
    reader.expect(scale, StDType::f32, {shape[0]});
    w->scales = reader.read_f32(scale);
    require_finite(w->scales.data(), {shape[0]}, reader.path(), scale, hint);
    for (size_t i = 0; i < w->scales.size(); ++i)
      if (w->scales[i] < 0.0f)
        throw FormatError(reader.path() + ": tensor '" + scale + "' index " + std::to_string(i) + " is negative", hint);
    for (int8_t q : w->s8)
      if (q < -backend::QuantizedWeight::kInt8Levels)  // -128: the quantization never writes it
        throw FormatError(reader.path() + ": tensor '" + name + "' holds -128, outside the symmetric int8 range", hint);
  } else if (e.dtype == StDType::bf16) {
    w->type = backend::MatmulPrecision::bf16;
    w->bf16.resize(static_cast<size_t>(e.numel()));
    reader.read_raw(e, w->bf16.data());
    std::vector<float> values(w->bf16.size());
    w->dequantize(values.data(), w->K);
    require_finite(values.data(), shape, reader.path(), name, hint);
  } else {
    throw FormatError(reader.path() + ": tensor '" + name + "' is " + st_dtype_name(e.dtype) + ", expected I8 or BF16");
  }
  return w;
}

QuantizeResult quantize_model_dir(const std::string& model, const std::string& out, const std::string& type,
                                  bool replace) {
  if (type != "int8" && type != "bf16") throw UsageError("--type must be int8 or bf16 (got '" + type + "')");
  std::error_code ec;
  if (fs::weakly_canonical(out, ec) == fs::weakly_canonical(model, ec))
    throw Error("the output " + out + " is the model itself", "write the quantized copy to a new directory");
  nlohmann::json full;
  load_model_config(model, &full);
  const std::string config_path = (fs::path(model) / config_file_name).string();
  if (const std::string stored = stored_weight_type(full, config_path); stored != "float32")
    throw FormatError(model + ": the weights are already stored as " + stored,
                      "quantize the float32 model this one was made from");
  std::vector<std::string> vocab;  // file names inside the model directory
  if (full.contains("vocab")) {
    vocab_files(model, full);  // checks that they are there
    for (const auto& [key, value] : full["vocab"].items()) {  // SentencePiece models and piece tables
      const std::string name = value.get<std::string>();
      if (std::find(vocab.begin(), vocab.end(), name) == vocab.end()) vocab.push_back(name);
    }
  }
  const std::string weights = (fs::path(model) / weights_file_name).string();
  SafetensorsReader reader(weights);
  check_output_dir(out, replace, {config_file_name}, "a tt model directory");

  const backend::MatmulPrecision precision =
      type == "int8" ? backend::MatmulPrecision::int8 : backend::MatmulPrecision::bf16;
  QuantizeResult result;
  std::deque<std::vector<float>> values;  // the tensors' storage while they are written
  std::deque<backend::QuantizedWeight> quantized;
  std::vector<TensorRef> refs;
  for (const TensorEntry& e : reader.tensors()) {
    if (e.dtype != StDType::f32)
      throw FormatError(weights + ": tensor '" + e.name + "' is " + st_dtype_name(e.dtype) + ", expected F32");
    values.push_back(reader.read_f32(e.name));
    require_finite(values.back().data(), e.shape, weights, e.name, "quantize a checkpoint that did not diverge");
    result.bytes_in += static_cast<int64_t>(values.back().size() * 4);
    if (!is_product_weight(e.name, e.shape.size())) {
      refs.push_back(TensorRef{e.name, StDType::f32, e.shape, values.back().data()});
      result.bytes_out += static_cast<int64_t>(values.back().size() * 4);
      continue;
    }
    const int N = static_cast<int>(e.shape[0]), K = static_cast<int>(e.shape[1]);
    quantized.push_back(backend::QuantizedWeight::quantize(precision, values.back().data(), N, K, K));
    values.back() = {};
    const backend::QuantizedWeight& q = quantized.back();
    ++result.quantized;
    if (precision == backend::MatmulPrecision::int8) {
      refs.push_back(TensorRef{e.name, StDType::i8, e.shape, q.s8.data()});
      refs.push_back(TensorRef{scale_tensor_name(e.name), StDType::f32, {e.shape[0]}, q.scales.data()});
      result.bytes_out += static_cast<int64_t>(q.s8.size() + 4 * q.scales.size());
    } else {
      refs.push_back(TensorRef{e.name, StDType::bf16, e.shape, q.bf16.data()});
      result.bytes_out += static_cast<int64_t>(2 * q.bf16.size());
    }
  }
  full["quantization"] = {{"type", type}};
  full["tt_version"] = tt::version();

  util::AtomicDirectory dir(out);
  write_safetensors(dir.file(weights_file_name), refs,
                    {{"format", "pt"}, {"tt_version", tt::version()}, {"quantization", type}});
  util::AtomicFile config(dir.file(config_file_name), false);
  config.stream() << full.dump(2) << "\n";
  config.commit();
  for (const auto& name : vocab)
    util::write_file_bytes(dir.file(name), util::read_file_bytes((fs::path(model) / name).string()));
  dir.commit();
  return result;
}

void adopt_weights(backend::Backend& backend, const AdoptedWeights& weights) {
  for (const auto& [slot, w] : weights)
    if (!backend.adopt_stored_weight(slot, w))
      throw InternalError("a decoding backend refused a quantized weight that another one took");
}

}  // namespace tt::io
