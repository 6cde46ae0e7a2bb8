// tt-convert quantize: what the quantized model directory holds, what is refused, and that tt-translate
// runs it exactly as the float32 model at the same --compute-type (int8 on CPUs with VNNI; bf16 on CPUs
// with AVX512-BF16 or AMX), and dequantizes it at any other compute type.
#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "backend/cpu/packed_gemm.h"
#include "backend/quantized_weight.h"
#include "io/average.h"
#include "io/model_dir.h"
#include "io/quantized_model.h"
#include "io/safetensors.h"
#include "nn/transformer.h"
#include "support/run_command.h"
#include "support/tmp_dir.h"
#include "util/error.h"

using tt::test::run_command;
using tt::test::tool;

namespace {

tt::nn::ModelConfig small_config() {
  auto c = tt::nn::preset("tiny");
  c.d_model = 16, c.d_ff = 24, c.heads = 2, c.n_layers_enc = 1, c.n_layers_dec = 1;
  c.vocab_size_src = c.vocab_size_tgt = 12;
  return c;
}

std::string save_model(const tt::test::TmpDir& tmp, const std::string& name) {
  auto backend = tt::backend::make_backend("cpu", 1);
  tt::nn::Transformer model(small_config(), *backend);
  model.init_parameters(3);
  tt::io::save_model_dir(tmp.file(name), small_config(), model.params(),
                         {{"vocab", {{"source", "spm.model"}, {"target", "spm.model"}}}});
  std::ofstream(tmp.file(name + "/spm.model")) << "spm bytes";
  return tmp.file(name);
}


// A 2-layer tiny model of a 40-piece vocabulary, trained 2 synthetic steps: tmp/m.
std::string tiny_model(tt::test::TmpDir& tmp) {
  const std::string model = tmp.file("m");
  const auto r = run_command(tool("tt-train") + " --preset tiny --layers 2 --vocab-size 40 --synthetic-steps 2 "
                             "--batch-size 2 --src-len 6 --tgt-len 6 --threads 1 -q -o " + model);
  REQUIRE(r.status == 0);
  return model;
}
}  // namespace

TEST_CASE("quantize: linear weights as I8 with row scales, everything else F32, config and vocabulary kept",
          "[quantized]") {
  tt::test::TmpDir tmp;
  const std::string model = save_model(tmp, "m");
  const auto r = tt::io::quantize_model_dir(model, tmp.file("q"), "int8", false);
  tt::io::SafetensorsReader in(model + "/model.safetensors"), out(tmp.file("q/model.safetensors"));
  int64_t weights = 0;
  for (const auto& e : in.tensors()) {
    INFO(e.name);
    if (!tt::io::is_product_weight(e.name, e.shape.size())) {
      CHECK(out.get(e.name).dtype == tt::io::StDType::f32);
      CHECK(out.read_f32(e.name) == in.read_f32(e.name));
      continue;
    }
    ++weights;
    CHECK(out.get(e.name).dtype == tt::io::StDType::i8);
    const auto w = in.read_f32(e.name);
    const auto q = tt::backend::QuantizedWeight::quantize(tt::backend::MatmulPrecision::int8, w.data(),
                                                          static_cast<int>(e.shape[0]), static_cast<int>(e.shape[1]),
                                                          e.shape[1]);
    std::vector<int8_t> stored(q.s8.size());
    out.read_raw(out.get(e.name), stored.data());
    CHECK(stored == q.s8);
    CHECK(out.read_f32(tt::io::scale_tensor_name(e.name)) == q.scales);
  }
  CHECK(weights == r.quantized);
  CHECK(weights == 4 + 2 + 4 + 4 + 2);  // encoder q k v out fc1 fc2, decoder self and cross q k v out, fc1 fc2
  CHECK(out.get("embeddings.shared.weight").dtype == tt::io::StDType::f32);
  CHECK(r.bytes_out < r.bytes_in);
  nlohmann::json config;
  tt::io::load_model_config(tmp.file("q"), &config);
  CHECK(config["quantization"]["type"] == "int8");
  CHECK(tt::io::stored_weight_type(config, "c") == "int8");
  CHECK(tt::test::read_file(tmp.file("q/spm.model")) == "spm bytes");
  CHECK_THROWS_WITH(tt::io::average_model_dirs(tmp.file("avg"), {tmp.file("q"), model}),
                    Catch::Contains("stored as int8") && Catch::Contains(tmp.file("q")));

  // Loaded without a backend that takes them, the weights are dequantized into the model.
  auto backend = tt::backend::make_backend("cpu", 1);
  tt::nn::Transformer loaded(small_config(), *backend, tt::nn::Usage::inference);
  CHECK(tt::io::load_model_weights(tmp.file("q"), loaded.params()).empty());
  const auto& p = loaded.params().get("decoder.layers.0.ffn.fc1.weight");
  const auto values = loaded.params().values().to_host_f32();
  const auto w = in.read_f32(p.name);
  for (int64_t i = 0; i < p.shape.numel(); ++i)
    CHECK(std::abs(values[static_cast<size_t>(p.offset + i)] - w[static_cast<size_t>(i)]) <= 1.0f / 127.0f);
}

TEST_CASE("quantize refuses a quantized model, an unknown type and an existing output, and names damaged scales",
          "[quantized]") {
  tt::test::TmpDir tmp;
  const std::string model = save_model(tmp, "m");
  tt::io::quantize_model_dir(model, tmp.file("q"), "bf16", false);
  CHECK_THROWS_WITH(tt::io::quantize_model_dir(tmp.file("q"), tmp.file("qq"), "int8", false),
                    Catch::Contains("already stored as bf16"));
  CHECK_THROWS_AS(tt::io::quantize_model_dir(model, tmp.file("x"), "int4", false), tt::UsageError);
  CHECK_THROWS_WITH(tt::io::quantize_model_dir(model, tmp.file("q"), "int8", false), Catch::Contains("already exists"));
  CHECK_THROWS_WITH(tt::io::quantize_model_dir(model, model + "/", "int8", true), Catch::Contains("the model itself"));
  CHECK(tt::io::SafetensorsReader(model + "/model.safetensors").get("encoder.layers.0.ffn.fc1.weight").dtype ==
        tt::io::StDType::f32);
  CHECK_FALSE(std::filesystem::exists(tmp.file("qq")));

  tt::io::quantize_model_dir(model, tmp.file("i8"), "int8", false);
  // Drop one scale tensor: the load names the weight and the missing scales.
  tt::io::SafetensorsReader r(tmp.file("i8/model.safetensors"));
  std::vector<std::vector<char>> bytes;
  std::vector<tt::io::TensorRef> refs;
  for (const auto& e : r.tensors()) {
    if (e.name == "encoder.layers.0.ffn.fc2.weight_scale") continue;
    bytes.emplace_back(e.end - e.begin);
    r.read_raw(e, bytes.back().data());
    refs.push_back({e.name, e.dtype, e.shape, nullptr});
  }
  for (size_t i = 0; i < refs.size(); ++i) refs[i].data = bytes[i].data();
  tt::io::write_safetensors(tmp.file("i8/model.safetensors"), refs);
  auto backend = tt::backend::make_backend("cpu", 1);
  tt::nn::Transformer loaded(small_config(), *backend, tt::nn::Usage::inference);
  CHECK_THROWS_WITH(tt::io::load_model_weights(tmp.file("i8"), loaded.params()),
                    Catch::Contains("encoder.layers.0.ffn.fc2.weight") && Catch::Contains("no scales"));
}

TEST_CASE("tt-translate runs a quantized model as the float32 model at that compute type, on every worker",
          "[quantized]") {
  tt::test::TmpDir tmp;
  const std::string model = tiny_model(tmp);
  tt::test::CommandResult r;
  tmp.write("in.ids", "5 6 7 8 9\n10 11 12\n\n13 14 15 16 17 18 19 20\n21\n");
  auto translate = [&](const std::string& dir, const std::string& flags) {
    const std::string out = tmp.file("scores");
    auto t = run_command(tool("tt-translate") + " -m " + dir + " --input-format ids --output-format ids --max-len-b 8 "
                         "--threads 2 --workers 2 --batch-size 2 -q --scores-file " + out + " " + flags + " < " +
                         tmp.file("in.ids"));
    INFO(t.err);
    REQUIRE(t.status == 0);
    return t.out + tt::test::read_file(out);
  };
  for (const std::string type : {"int8", "bf16"}) {
    INFO(type);
    if (run_command(tool("tt-translate") + " -m " + model + " --compute-type " + type + " -q < /dev/null").status != 0)
      continue;  // bf16 needs AVX512-BF16 or AMX
    // Without VNNI the int8 products give weights 7 bits, not the 8 stored: the model is dequantized there.
    if (type == "int8" && tt::backend::cpu::PackedGemm::int8_weight_levels() != 127) continue;
    r = run_command(tool("tt-convert") + " quantize " + model + " -o " + tmp.file(type) + " --type " + type);
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.err.find("weight matrices as " + type) != std::string::npos);
    // The quantized model runs at its stored type by default.
    CHECK(translate(tmp.file(type), "") == translate(model, "--compute-type " + type));
    CHECK(translate(tmp.file(type), "--compute-type " + type) == translate(model, "--compute-type " + type));
    // At float32 it is dequantized: it runs, close to but not the float32 model.
    CHECK_FALSE(translate(tmp.file(type), "--compute-type float32").empty());
  }
}

TEST_CASE("a model stored in a type the device has no products for runs dequantized at float32, with a note",
          "[quantized]") {
  tt::test::TmpDir tmp;
  const std::string model = tiny_model(tmp);
  tt::test::CommandResult r;
  // (ids in and out: the synthetic model has no SentencePiece model for text)
  const std::string ids = " --input-format ids --output-format ids";
  if (run_command(tool("tt-translate") + " -m " + model + ids + " --compute-type bf16 -q < /dev/null").status == 0) {
    SUCCEED("this CPU has bf16 products: nothing to fall back from");  // the CUDA test covers int8 there
    return;
  }
  r = run_command(tool("tt-convert") + " quantize " + model + " -o " + tmp.file("b") + " --type bf16");
  REQUIRE(r.status == 0);
  tmp.write("in.ids", "5 6 7 8 9\n10 11 12\n");
  const std::string translate = tool("tt-translate") + " -m " + tmp.file("b") +
                                " --input-format ids --output-format ids --max-len-b 8 --threads 1 < " +
                                tmp.file("in.ids");
  const auto by_default = run_command(translate);
  INFO(by_default.err);
  CHECK(by_default.status == 0);
  CHECK(by_default.err.find("--compute-type bf16 is not available on cpu") != std::string::npos);
  CHECK(by_default.err.find("running the bf16 model at float32") != std::string::npos);
  const auto at_float32 = run_command(translate + " --compute-type float32 -q");
  CHECK(at_float32.status == 0);
  CHECK(by_default.out == at_float32.out);
  CHECK(std::count(by_default.out.begin(), by_default.out.end(), '\n') == 2);
}

TEST_CASE("tt-translate --compute-type auto: int8 on a CPU with VNNI, float32 on one with neither VNNI nor bf16",
          "[quantized]") {
  tt::test::TmpDir tmp;
  const std::string model = tiny_model(tmp);
  tmp.write("in.ids", "5 6 7 8 9\n10 11 12\n\n13 14 15 16 17 18 19 20\n");
  auto translate = [&](const std::string& env, const std::string& type) {
    auto t = run_command(env + tool("tt-translate") + " -m " + model + " --input-format ids --output-format ids "
                         "--max-len-b 8 --threads 1 --nbest 2 --compute-type " + type + " < " + tmp.file("in.ids"));
    INFO(t.err);
    REQUIRE(t.status == 0);
    return t;
  };
  // This machine: VNNI (every AVX-512 VNNI, AVX-VNNI, AVX512-BF16 or AMX CPU) makes auto int8.
  if (tt::backend::cpu::PackedGemm::int8_weight_levels() == 127) {
    const auto picked = translate("", "auto");
    CHECK_THAT(picked.err, Catch::Contains("compute int8"));
    CHECK(picked.out == translate("", "int8").out);
  }
  // Capped at AVX2 (no VNNI, no bf16), auto is float32; the same output as asking for it.
  const std::string avx2 = "DNNL_MAX_CPU_ISA=AVX2 ";
  const auto capped = translate(avx2, "auto");
  CHECK_THAT(capped.err, Catch::Contains("compute float32"));
  CHECK(capped.out == translate(avx2, "float32").out);
  CHECK(std::count(capped.out.begin(), capped.out.end(), '\n') == 7);  // 2-best of 3 lines, the empty line empty
}
