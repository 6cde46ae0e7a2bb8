// Hand-written model directories for the averaging tests: two tiny tensors, a config.json with an extra
// section, a fake SentencePiece file (copied byte for byte) and optimizer state (never copied).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "nn/config.h"

namespace tt::test {

inline nn::ModelConfig tiny_config() {
  auto c = nn::preset("tiny");
  c.vocab_size_src = c.vocab_size_tgt = 100;
  return c;
}

// A model directory written by hand: two small tensors (a [2, 2] weight and a [3] bias), config.json with
// an extra section, and a fake SentencePiece file (the averager copies it byte for byte).
struct FakeModel {
  std::vector<float> weight{0, 0, 0, 0};
  std::vector<float> bias{0, 0, 0};
  std::vector<int64_t> bias_shape{3};
  io::StDType bias_dtype = io::StDType::f32;
  std::string bias_name = "encoder.bias";
  nn::ModelConfig config = tiny_config();
  std::string spm = "spm bytes";
  nlohmann::json vocab = {{"source", "spm.model"}, {"target", "spm.model"}};

  std::string write(const std::string& dir) const {
    std::filesystem::create_directories(dir);
    nlohmann::json j{{"model", nn::to_json(config)}, {"vocab", vocab}, {"train", {{"lr", 0.5}}}};
    std::ofstream(dir + "/config.json") << j.dump(2);
    std::ofstream(dir + "/spm.model", std::ios::binary) << spm;
    std::ofstream(dir + "/optimizer.safetensors") << "not copied";
    std::vector<int32_t> bias_i32(bias.begin(), bias.end());
    const void* bias_data = bias_dtype == io::StDType::f32 ? static_cast<const void*>(bias.data()) : bias_i32.data();
    io::write_safetensors(dir + "/model.safetensors", {{"encoder.weight", io::StDType::f32, {2, 2}, weight.data()},
                                                       {bias_name, bias_dtype, bias_shape, bias_data}});
    return dir;
  }
};

}  // namespace tt::test
