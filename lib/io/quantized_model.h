// Model directories whose weights are stored quantized (tt-convert quantize): the matrices the products
// read as x W^T — every linear layer's weight — are stored as I8 with one F32 scale per row
// ("<name>_scale", scale = max|row| / 127, W ~ q * scale) or as BF16, in backend/quantized_weight.h's
// quantization, which is the one tt-translate --compute-type int8 / bf16 applies to fp32 weights. The
// embeddings (looked up, and the tied output projection) and everything else stay F32, so such a model
// translates exactly like the fp32 model at that compute type (int8: on CPUs with VNNI, where the products
// take 127 levels). config.json says so: "quantization": {"type": "int8"} (or "bf16").
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "backend/quantized_weight.h"

namespace tt::io {

// The weights stored quantized: a rank-2 "*.weight" outside "embeddings.".
bool is_product_weight(const std::string& name, size_t rank);
inline std::string scale_tensor_name(const std::string& weight) { return weight + "_scale"; }

// The stored type a config.json names ("int8", "bf16"), or "float32" without a "quantization" section.
// Another value is a tt::FormatError naming `where`.
std::string stored_weight_type(const nlohmann::json& config, const std::string& where);

class SafetensorsReader;

// Tensor `name` stored quantized (I8 with its scales, or BF16) as a weight of `shape` [N, K]. A wrong shape,
// a missing or misshapen scale tensor, or a scale or value that is not finite (or a negative scale) is a
// tt::FormatError naming the file and the tensor.
std::shared_ptr<const backend::QuantizedWeight> read_quantized_weight(SafetensorsReader& reader, const std::string& name,
                                                                      const std::vector<int64_t>& shape);

struct QuantizeResult {
  int64_t quantized = 0;  // tensors stored quantized
  int64_t bytes_in = 0, bytes_out = 0;  // model.safetensors sizes
};

// Writes the model directory `model` as `out` with its product weights in `type` ("int8" or "bf16"):
// config.json (with the "quantization" section) and the vocabulary files copied, model.safetensors
// rewritten. An existing `out` is replaced only with `replace` (io/output_dir.h); the output appears
// atomically. A model already quantized is refused (quantize the float32 model).
QuantizeResult quantize_model_dir(const std::string& model, const std::string& out, const std::string& type,
                                  bool replace);

// Weights a backend adopted (by their fp32 slot), to hand the same ones to another backend (a worker).
using AdoptedWeights = std::vector<std::pair<const float*, std::shared_ptr<const backend::StoredWeight>>>;
// Hands every one to `backend`; one refused is a tt::InternalError (the backends must run alike).
void adopt_weights(backend::Backend& backend, const AdoptedWeights& weights);

}  // namespace tt::io
