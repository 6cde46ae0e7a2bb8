#include "io/model_dir.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "backend/quantized_weight.h"
#include "io/json_file.h"
#include "io/safetensors.h"
#include "ops/copy.h"
#include "util/atomic_dir.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/file_kind.h"
#include "util/version.h"

namespace tt::io {

namespace {

std::vector<int64_t> dims(const tensor::Shape& shape) {
  std::vector<int64_t> out;
  for (int i = 0; i < shape.rank(); ++i) out.push_back(shape[i]);
  return out;
}

std::string join(const std::string& dir, const char* name) { return (std::filesystem::path(dir) / name).string(); }

// config_from_json over `base`, validated when asked; errors name `path`.
nn::ModelConfig config_from(const nlohmann::json& j, const nn::ModelConfig& base, bool validate,
                            const std::string& path) {
  try {
    nn::ModelConfig config = nn::config_from_json(j, base);
    if (validate) config.validate();
    return config;
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": ", e);
  }
}

// The model file, kept open for the weights a backend reads when it packs them (from any thread).
struct SharedReader {
  explicit SharedReader(const std::string& path) : reader(path) {}
  std::mutex mutex;
  SafetensorsReader reader;
};

std::shared_ptr<const backend::StoredWeight> stored_weight(std::shared_ptr<SharedReader> file, const std::string& name,
                                                           const std::vector<int64_t>& shape, StDType dtype) {
  auto w = std::make_shared<backend::StoredWeight>();
  w->type = dtype == StDType::i8     ? backend::MatmulPrecision::int8
            : dtype == StDType::bf16 ? backend::MatmulPrecision::bf16
                                     : backend::MatmulPrecision::fp32;
  w->N = static_cast<int>(shape[0]);
  w->K = static_cast<int>(shape[1]);
  // Read (and checked) again from the file the model was loaded from: the same values, or an error naming
  // the file if it was changed in place since.
  w->read = [file = std::move(file), name, shape, type = w->type] {
    const std::lock_guard<std::mutex> lock(file->mutex);
    if (type != backend::MatmulPrecision::fp32) return *read_quantized_weight(file->reader, name, shape);
    backend::QuantizedWeight values;
    values.type = type;
    values.N = static_cast<int>(shape[0]);
    values.K = static_cast<int>(shape[1]);
    values.f32 = file->reader.read_f32(name);
    require_finite(values.f32.data(), shape, file->reader.path(), name, "the model file changed since it was loaded");
    return values;
  };
  return w;
}

}  // namespace

void save_parameters(const std::string& path, const nn::ParameterSet& params,
                     const std::map<std::string, std::string>& metadata) {
  if (!params.allocated()) throw InternalError("save_parameters: parameters are not allocated");
  // One device-to-host copy of the flat buffer; each tensor is then a view into it.
  const std::vector<float> host = params.values().to_host_f32();
  std::vector<TensorRef> refs;
  refs.reserve(params.all().size());
  for (const auto& p : params.all())
    refs.push_back(TensorRef{p.name, StDType::f32, dims(p.shape), host.data() + p.offset});
  write_safetensors(path, refs, metadata);
}

AdoptedWeights load_parameters(const std::string& path, const nn::ParameterSet& params, backend::Backend* adopter) {
  if (!params.allocated()) throw InternalError("load_parameters: parameters are not allocated");
  SafetensorsReader reader(path);
  std::set<std::string> known;
  for (const auto& p : params.all()) {
    known.insert(p.name);
    const TensorEntry* e = reader.find(p.name);
    if (e && e->dtype == StDType::i8) known.insert(scale_tensor_name(p.name));
  }
  for (const auto& e : reader.tensors())
    if (!known.count(e.name))
      throw FormatError(path + ": tensor '" + e.name + "' is not a parameter of this model",
                        "the weights were saved from a different architecture; check config.json");
  // Tensor by tensor into its slot (the alignment padding between slots stays zero): no second copy of the
  // whole model. With an adopter, the weights the products read stay in the file: the backend reads each
  // when it packs it, and their slots are never written.
  backend::Backend& device = params.values().backend();
  std::shared_ptr<SharedReader> file;
  std::vector<float> host;
  AdoptedWeights adopted;
  for (const auto& p : params.all()) {
    float* slot = params.values().f32() + p.offset;
    const TensorEntry* stored = reader.find(p.name);
    host.resize(static_cast<size_t>(p.shape.numel()));
    if (stored && (stored->dtype == StDType::i8 || stored->dtype == StDType::bf16)) {
      read_quantized_weight(reader, p.name, dims(p.shape))->dequantize(host.data(), p.shape[1]);  // (checked)
    } else {
      const TensorEntry& e = reader.expect(p.name, StDType::f32, dims(p.shape));
      reader.read_raw(e, host.data());
      require_finite(host.data(), e.shape, path, p.name,
                     "the weights are damaged or the training diverged; use another checkpoint");
    }
    if (adopter && is_product_weight(p.name, static_cast<size_t>(p.shape.rank()))) {
      if (!file) file = std::make_shared<SharedReader>(path);
      auto w = stored_weight(file, p.name, dims(p.shape), stored->dtype);
      if (adopter->adopt_stored_weight(slot, w)) {
        device.discard(slot, host.size() * sizeof(float));
        adopted.emplace_back(slot, std::move(w));
        continue;
      }
    }
    device.copy_from_host(slot, host.data(), host.size() * sizeof(float));
  }
  return adopted;
}

void write_model_config(const std::string& dir, const nn::ModelConfig& config, const nlohmann::json& extra) {
  if (!extra.is_object()) throw InternalError("write_model_config: extra must be a JSON object");
  nlohmann::json j = extra;
  j["model"] = nn::to_json(config);
  j["tt_version"] = tt::version();
  util::AtomicFile file(join(dir, config_file_name), false);
  file.stream() << j.dump(2) << "\n";
  file.commit();
}

void write_model_files(const std::string& dir, const nn::ModelConfig& config, const nn::ParameterSet& params,
                       const nlohmann::json& extra) {
  write_model_config(dir, config, extra);
  save_parameters(join(dir, weights_file_name), params, {{"format", "pt"}, {"tt_version", tt::version()}});
}

void save_model_dir(const std::string& dir, const nn::ModelConfig& config, const nn::ParameterSet& params,
                    const nlohmann::json& extra) {
  util::AtomicDirectory out(dir);
  write_model_files(out.path(), config, params, extra);
  out.commit();
}

nn::ModelConfig load_model_config(const std::string& dir, nlohmann::json* full) {
  const std::string path = join(dir, config_file_name);
  nlohmann::json j = read_json_file(path, "is " + dir + " a tt model directory (config.json + model.safetensors)?");
  if (!j.is_object() || !j.contains("model"))
    throw FormatError(path + ": no \"model\" section", "a tt config.json holds the architecture under \"model\"");
  // A model's shape has no default: a missing size would fall back to a preset's and then blame the
  // weights' shapes for it.
  if (j["model"].is_object())
    for (const char* key : {"vocab_size_src", "vocab_size_tgt", "d_model", "d_ff", "heads", "n_layers_enc",
                            "n_layers_dec"})
      if (!j["model"].contains(key))
        throw FormatError(path + ": the \"model\" section has no \"" + key + "\"",
                          "every tt model's config.json names its sizes; restore the file the model was saved with");
  const nn::ModelConfig config = config_from(j["model"], {}, true, path);
  if (full) *full = std::move(j);
  return config;
}

nn::ModelConfig read_model_config_file(const std::string& path, const nn::ModelConfig& base) {
  const nlohmann::json j = read_json_file(path, "give a JSON model config or a model directory's config.json");
  const bool model_dir = j.is_object() && j.contains("model") && j["model"].is_object();
  return config_from(model_dir ? j["model"] : j, base, false, path);
}

AdoptedWeights load_model_weights(const std::string& dir, const nn::ParameterSet& params, backend::Backend* adopter) {
  return load_parameters(join(dir, weights_file_name), params, adopter);
}

}  // namespace tt::io
