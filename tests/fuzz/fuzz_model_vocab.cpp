// A model directory's config.json paired with a SentencePiece model: the input is the config's JSON, a NUL,
// then the bytes of spm.model. Whatever the two say, io::load_tokenizers gives tokenizers whose sizes equal
// the model's vocabulary, or a tt::Error; never a crash, a hang (a "vocab" naming a FIFO or a device) or
// another exception.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "io/model_vocab.h"
#include "nn/config.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = [] {
    const std::string d = "/tmp/tt-fuzz-model-" + std::to_string(::getpid());
    std::filesystem::create_directories(d);
    return d;
  }();
  const auto* nul = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  if (!nul) return 0;
  const nlohmann::json j = nlohmann::json::parse(data, nul, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return 0;
  std::ofstream(dir + "/spm.model", std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(nul + 1), static_cast<std::streamsize>(data + size - nul - 1));
  try {
    const auto it = j.find("model");
    const tt::nn::ModelConfig config = tt::nn::config_from_json(it == j.end() ? nlohmann::json::object() : *it);
    const tt::io::ModelTokenizers t = tt::io::load_tokenizers(dir, j, config);
    if (t.source.size() != config.vocab_size_src || t.target.size() != config.vocab_size_tgt)
      __builtin_trap();
  } catch (const tt::Error&) {
  }
  return 0;
}
