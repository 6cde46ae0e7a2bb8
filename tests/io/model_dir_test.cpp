// Model directories: parameters by name through safetensors (host <-> device), config.json, and the
// errors for weights that do not fit the model.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "io/model_dir.h"
#include "io/safetensors.h"
#include "nn/params.h"
#include "support/tmp_dir.h"
#include "util/error.h"

namespace {

// A small registry: odd sizes so the flat buffer has alignment padding between tensors.
void declare(tt::nn::ParameterSet& p, int rows = 3) {
  p.declare("encoder.layers.0.self_attn.q_proj.weight", tt::tensor::Shape{rows, 5});
  p.declare("encoder.layers.0.self_attn.q_proj.bias", tt::tensor::Shape{rows});
  p.declare("embeddings.shared.weight", tt::tensor::Shape{7, 2});
}

void fill(const tt::nn::ParameterSet& p, float base) {
  std::vector<float> host(static_cast<size_t>(p.flat_size()));
  for (size_t i = 0; i < host.size(); ++i) host[i] = base + 0.25f * static_cast<float>(i);
  p.values().backend().copy_from_host(p.values().f32(), host.data(), host.size() * 4);
}

tt::nn::ModelConfig tiny_config() {
  auto c = tt::nn::preset("tiny");
  c.vocab_size_src = c.vocab_size_tgt = 100;
  return c;
}

}  // namespace

TEST_CASE("parameters round trip through safetensors by name", "[model_dir]") {
  auto backend = tt::backend::make_backend("cpu", 1);
  tt::nn::ParameterSet a, b;
  declare(a);
  declare(b);
  a.allocate(*backend);
  b.allocate(*backend);
  fill(a, 1.0f);
  fill(b, -100.0f);
  tt::test::TmpDir dir;
  const std::string path = dir.file("w.safetensors");
  tt::io::save_parameters(path, a);
  tt::io::load_parameters(path, b);
  for (size_t i = 0; i < a.all().size(); ++i) CHECK(a[i].value.to_host_f32() == b[i].value.to_host_f32());

  tt::io::SafetensorsReader r(path);
  REQUIRE(r.tensors().size() == 3);
  CHECK(r.tensors()[0].name == "encoder.layers.0.self_attn.q_proj.weight");
  CHECK(r.get("embeddings.shared.weight").shape == std::vector<int64_t>{7, 2});
  CHECK(r.read_f32("encoder.layers.0.self_attn.q_proj.bias") == a[1].value.to_host_f32());
}

TEST_CASE("loading weights that do not fit the model names the file and the tensor", "[model_dir]") {
  auto backend = tt::backend::make_backend("cpu", 1);
  tt::test::TmpDir dir;
  tt::nn::ParameterSet saved;
  declare(saved);
  saved.allocate(*backend);
  fill(saved, 0.0f);
  const std::string path = dir.file("w.safetensors");
  tt::io::save_parameters(path, saved);

  SECTION("shape mismatch") {
    tt::nn::ParameterSet other;
    declare(other, 4);
    other.allocate(*backend);
    CHECK_THROWS_AS(tt::io::load_parameters(path, other), tt::FormatError);
    CHECK_THROWS_WITH(tt::io::load_parameters(path, other),
                      Catch::Contains(path) && Catch::Contains("encoder.layers.0.self_attn.q_proj.weight") &&
                          Catch::Contains("[3, 5]") && Catch::Contains("[4, 5]"));
  }
  SECTION("tensor missing from the file") {
    tt::nn::ParameterSet other;
    declare(other);
    other.declare("decoder.final_norm.weight", tt::tensor::Shape{5});
    other.allocate(*backend);
    CHECK_THROWS_WITH(tt::io::load_parameters(path, other),
                      Catch::Contains(path) && Catch::Contains("decoder.final_norm.weight"));
  }
  SECTION("tensor the model does not have") {
    tt::nn::ParameterSet other;
    other.declare("encoder.layers.0.self_attn.q_proj.weight", tt::tensor::Shape{3, 5});
    other.declare("encoder.layers.0.self_attn.q_proj.bias", tt::tensor::Shape{3});
    other.allocate(*backend);
    CHECK_THROWS_WITH(tt::io::load_parameters(path, other),
                      Catch::Contains("embeddings.shared.weight") && Catch::Contains("not a parameter"));
  }
  SECTION("truncated file") {
    const std::string bytes = tt::test::read_file(path);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 9);
    tt::nn::ParameterSet other;
    declare(other);
    other.allocate(*backend);
    CHECK_THROWS_AS(tt::io::load_parameters(path, other), tt::FormatError);
  }
}

TEST_CASE("a model directory holds config.json and model.safetensors", "[model_dir]") {
  auto backend = tt::backend::make_backend("cpu", 1);
  tt::nn::ParameterSet p, q;
  declare(p);
  declare(q);
  p.allocate(*backend);
  q.allocate(*backend);
  fill(p, 3.0f);
  tt::test::TmpDir tmp;
  const std::string dir = tmp.file("model/sub");  // created on save
  const auto config = tiny_config();
  tt::io::save_model_dir(dir, config, p, nlohmann::json{{"vocab", {{"src", "spm.model"}}}});
  nlohmann::json full;
  auto loaded = tt::io::load_model_config(dir, &full);
  CHECK(tt::nn::to_json(loaded) == tt::nn::to_json(config));
  CHECK(full["vocab"]["src"] == "spm.model");
  CHECK(full["model"]["d_model"] == 128);
  tt::io::load_model_weights(dir, q);
  for (size_t i = 0; i < p.all().size(); ++i) CHECK(p[i].value.to_host_f32() == q[i].value.to_host_f32());
}

TEST_CASE("a bad config.json is an error naming the file", "[model_dir]") {
  tt::test::TmpDir tmp;
  CHECK_THROWS_AS(tt::io::load_model_config(tmp.path()), tt::IoError);  // no config.json
  const std::string path = tmp.file("config.json");
  tmp.write("config.json", "{ not json");
  CHECK_THROWS_WITH(tt::io::load_model_config(tmp.path()), Catch::Contains(path) && Catch::Contains("JSON"));
  tmp.write("config.json", R"({"model": {"d_model": 1e999}})");  // number overflow: out_of_range, not parse_error
  CHECK_THROWS_AS(tt::io::load_model_config(tmp.path()), tt::FormatError);
  CHECK_THROWS_WITH(tt::io::load_model_config(tmp.path()), Catch::Contains(path) && Catch::Contains("JSON"));
  tmp.write("config.json", R"({"d_model": 128})");
  CHECK_THROWS_WITH(tt::io::load_model_config(tmp.path()), Catch::Contains(path) && Catch::Contains("\"model\""));
  auto j = nlohmann::json{{"model", tt::nn::to_json(tiny_config())}};
  j["model"]["d_modle"] = 3;
  tmp.write("config.json", j.dump());
  CHECK_THROWS_WITH(tt::io::load_model_config(tmp.path()), Catch::Contains(path) && Catch::Contains("'d_modle'"));
  j["model"].erase("d_modle");
  j["model"]["heads"] = 5;  // 128 is not divisible by 5
  tmp.write("config.json", j.dump());
  CHECK_THROWS_AS(tt::io::load_model_config(tmp.path()), tt::ConfigError);
  CHECK_THROWS_WITH(tt::io::load_model_config(tmp.path()), Catch::Contains(path) && Catch::Contains("heads (5)"));
}

TEST_CASE("a config.json without one of the model's sizes names the missing key", "[model_dir]") {
  tt::test::TmpDir tmp;
  for (const char* key : {"d_model", "heads", "vocab_size_tgt"}) {
    auto j = nlohmann::json{{"model", tt::nn::to_json(tiny_config())}};
    j["model"].erase(key);
    tmp.write("config.json", j.dump());
    CHECK_THROWS_WITH(tt::io::load_model_config(tmp.path()),
                      Catch::Contains(tmp.file("config.json")) && Catch::Contains(std::string("\"") + key + "\""));
  }
}

TEST_CASE("a non-finite weight is refused at load naming the file, the tensor and the position", "[model_dir]") {
  auto backend = tt::backend::make_backend("cpu", 1);
  tt::test::TmpDir dir;
  tt::nn::ParameterSet saved, loaded;
  declare(saved);
  declare(loaded);
  saved.allocate(*backend);
  loaded.allocate(*backend);
  const std::string path = dir.file("w.safetensors");
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity()}) {
    fill(saved, 0.0f);
    std::vector<float> q = saved[0].value.to_host_f32();  // [3, 5]
    q[2 * 5 + 4] = bad;
    backend->copy_from_host(saved[0].value.f32(), q.data(), q.size() * 4);
    tt::io::save_parameters(path, saved);
    CHECK_THROWS_AS(tt::io::load_parameters(path, loaded), tt::FormatError);
    CHECK_THROWS_WITH(tt::io::load_parameters(path, loaded),
                      Catch::Contains(path) && Catch::Contains("encoder.layers.0.self_attn.q_proj.weight") &&
                          Catch::Contains("index 14 (row 2, column 4)") &&
                          Catch::Contains(std::isnan(bad) ? "(nan)" : "(-inf)"));
  }
}

TEST_CASE("model files that are not regular files are refused, never read (a FIFO would hang)", "[model_dir]") {
  auto backend = tt::backend::make_backend("cpu", 1);
  tt::test::TmpDir tmp;
  tt::nn::ParameterSet p;
  declare(p);
  p.allocate(*backend);
  const std::string weights = tmp.file("w.safetensors");
  REQUIRE(::mkfifo(weights.c_str(), 0600) == 0);
  CHECK_THROWS_AS(tt::io::load_parameters(weights, p), tt::IoError);
  CHECK_THROWS_WITH(tt::io::load_parameters(weights, p), Catch::Contains(weights) && Catch::Contains("a FIFO"));
  const std::string config = tmp.file("config.json");
  REQUIRE(::mkfifo(config.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(tt::io::load_model_config(tmp.path()), Catch::Contains(config) && Catch::Contains("a FIFO"));
  std::filesystem::remove(weights);
  std::filesystem::create_symlink("/dev/zero", weights);
  CHECK_THROWS_WITH(tt::io::load_parameters(weights, p), Catch::Contains("a character device"));
}
