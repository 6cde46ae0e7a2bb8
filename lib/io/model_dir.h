// A model directory: config.json (the architecture under "model", plus whatever other sections a tool
// adds: vocabulary files, training options) and model.safetensors (every parameter by name, F32).
// Weights move host <-> device in one copy of the flat parameter buffer.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "io/quantized_model.h"
#include "nn/config.h"
#include "nn/params.h"

namespace tt::io {

inline constexpr const char* config_file_name = "config.json";
inline constexpr const char* weights_file_name = "model.safetensors";

// Writes the parameter values (names and shapes from the registry) atomically.
void save_parameters(const std::string& path, const nn::ParameterSet& params,
                     const std::map<std::string, std::string>& metadata = {});
// Loads every parameter of `params` (allocated) from a safetensors file. A missing tensor, a tensor the
// model does not have, or a dtype/shape mismatch is a tt::FormatError naming the file and the tensor.
// Weights stored quantized (io/quantized_model.h) go to `adopter` as they are where it takes them (their
// fp32 slots are then left unwritten; returned, for other backends that read the same parameters), and are
// dequantized into their slots everywhere else.
AdoptedWeights load_parameters(const std::string& path, const nn::ParameterSet& params,
                               backend::Backend* adopter = nullptr);

// Writes config.json alone: {"model": config, "tt_version": ..., ...extra} (atomic). `extra` must be a
// JSON object.
void write_model_config(const std::string& dir, const nn::ModelConfig& config,
                        const nlohmann::json& extra = nlohmann::json::object());
// Writes config.json ({"model": config, ...extra}) and model.safetensors into the existing directory `dir`
// (each file atomic, the directory not: use it inside a util::AtomicDirectory to add more files).
// `extra` must be a JSON object; its keys are added beside "model".
void write_model_files(const std::string& dir, const nn::ModelConfig& config, const nn::ParameterSet& params,
                       const nlohmann::json& extra = nlohmann::json::object());
// The whole model directory, all-or-nothing: written into a temporary sibling and renamed onto `dir`
// (replacing an existing one only once the new one is complete).
void save_model_dir(const std::string& dir, const nn::ModelConfig& config, const nn::ParameterSet& params,
                    const nlohmann::json& extra = nlohmann::json::object());
// Reads and validates <dir>/config.json; errors name the file. `full` (if non-null) receives the whole JSON.
nn::ModelConfig load_model_config(const std::string& dir, nlohmann::json* full = nullptr);
// A JSON file holding a bare model config or a model directory's config.json ({"model": ...}), read over
// `base` (its missing keys keep base's values). Errors name the file.
nn::ModelConfig read_model_config_file(const std::string& path, const nn::ModelConfig& base);
// Loads <dir>/model.safetensors into `params` (declared from the same config and allocated); `adopter` as
// in load_parameters.
AdoptedWeights load_model_weights(const std::string& dir, const nn::ParameterSet& params,
                                  backend::Backend* adopter = nullptr);

}  // namespace tt::io
