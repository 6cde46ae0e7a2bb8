// Model config JSON: parse, apply, validate, count. A tt::Error is the right answer to bad input; a
// config that validates must count to a positive 64-bit number and survive a JSON round trip unchanged.
#include <cstdint>
#include <nlohmann/json.hpp>

#include "nn/config.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  try {
    tt::nn::ModelConfig c = tt::nn::config_from_json(j);
    c.validate();
    if (c.parameter_count() <= 0) __builtin_trap();
    if (c.training_state_bytes() != 16 * c.parameter_count()) __builtin_trap();
    const nlohmann::json saved = tt::nn::to_json(c);
    const tt::nn::ModelConfig back = tt::nn::config_from_json(nlohmann::json::parse(saved.dump()));
    if (tt::nn::to_json(back) != saved) __builtin_trap();
  } catch (const tt::Error&) {
  }
  return 0;
}
