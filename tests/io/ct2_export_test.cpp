// CTranslate2 export: the model.bin format on a worked example, and a tt model's weights under
// CTranslate2's names (fused q/k/v, tied embeddings as aliases, the config and vocabularies). That
// CTranslate2 itself translates like tt-translate is checked by scripts/check-ct2.sh (needs Python).
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "data/spm_tokenizer.h"
#include "io/ct2_export.h"
#include "io/ct2_model_file.h"
#include "io/marian_import.h"
#include "io/model_dir.h"
#include "io/safetensors.h"
#include "nn/positional.h"
#include "nn/transformer.h"
#include "../data/spm_fixture.h"
#include "support/tmp_dir.h"
#include "util/error.h"

namespace {

// A model.bin read back: variables by name, and aliases.
struct Ct2File {
  uint32_t version = 0, revision = 0;
  std::string spec;
  std::vector<std::string> order;  // stored variables, file order
  std::map<std::string, tt::io::Ct2Variable> vars;
  std::map<std::string, std::string> aliases;

  explicit Ct2File(const std::string& path) {
    const std::string b = tt::test::read_file(path);
    size_t o = 0;
    auto take = [&](void* dst, size_t n) {
      REQUIRE(o + n <= b.size());
      std::memcpy(dst, b.data() + o, n);
      o += n;
    };
    auto u8 = [&] { uint8_t v; take(&v, 1); return v; };
    auto u16 = [&] { uint16_t v; take(&v, 2); return v; };
    auto u32 = [&] { uint32_t v; take(&v, 4); return v; };
    auto str = [&] {
      const uint16_t n = u16();
      std::string s(b.data() + o, n - 1);
      REQUIRE(b[o + n - 1] == '\0');
      o += n;
      return s;
    };
    version = u32();
    spec = str();
    revision = u32();
    for (uint32_t i = 0, n = u32(); i < n; ++i) {
      tt::io::Ct2Variable v;
      v.name = str();
      for (uint8_t r = 0, rank = u8(); r < rank; ++r) v.shape.push_back(u32());
      v.type = static_cast<tt::io::Ct2Type>(u8());
      v.bytes.resize(u32());
      take(v.bytes.data(), v.bytes.size());
      order.push_back(v.name);
      vars[v.name] = v;
    }
    for (uint32_t i = 0, n = u32(); i < n; ++i) {
      const std::string alias = str();
      aliases[alias] = str();
    }
    CHECK(o == b.size());
  }
  std::vector<float> f32(const std::string& name) const {
    const auto it = aliases.find(name);
    const auto& v = vars.at(it == aliases.end() ? name : it->second);
    REQUIRE(v.type == tt::io::Ct2Type::float32);
    std::vector<float> out(v.bytes.size() / 4);
    std::memcpy(out.data(), v.bytes.data(), v.bytes.size());
    return out;
  }
  std::vector<int64_t> shape(const std::string& name) const {
    const auto it = aliases.find(name);
    return vars.at(it == aliases.end() ? name : it->second).shape;
  }
  int scalar(const std::string& name) const {
    const auto& v = vars.at(name);
    REQUIRE(v.shape.empty());
    if (v.type == tt::io::Ct2Type::int8) return static_cast<int8_t>(v.bytes[0]);
    int16_t x;
    std::memcpy(&x, v.bytes.data(), 2);
    return x;
  }
};

std::vector<float> concat(std::initializer_list<std::vector<float>> parts) {
  std::vector<float> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

tt::nn::ModelConfig small_config() {
  auto c = tt::nn::preset("tiny");
  c.d_model = 16, c.d_ff = 24, c.heads = 2, c.n_layers_enc = 2, c.n_layers_dec = 1;
  c.vocab_size_src = c.vocab_size_tgt = 12;
  c.max_positions = 20;
  return c;
}

std::string save_model(const tt::test::TmpDir& tmp, const std::string& name, const tt::nn::ModelConfig& c,
                       const nlohmann::json& extra = nlohmann::json::object()) {
  auto backend = tt::backend::make_backend("cpu", 1);
  tt::nn::Transformer model(c, *backend);
  model.init_parameters(7);
  tt::io::save_model_dir(tmp.file(name), c, model.params(), extra);
  return tmp.file(name);
}

}  // namespace

TEST_CASE("model.bin: header, variables in name order, scalars, and an equal variable stored once as an alias",
          "[ct2]") {
  tt::test::TmpDir tmp;
  const float a[2] = {1.5f, -2.0f}, zero[2] = {0.0f, -0.0f}, z2[2] = {-0.0f, 0.0f};
  tt::io::write_ct2_model_bin(tmp.file("model.bin"), "S", 3,
                              {tt::io::Ct2Variable::f32("b/w", {2}, a), tt::io::Ct2Variable::f32("a/w", {1, 2}, a),
                               tt::io::Ct2Variable::f32("c/w", {2}, a), tt::io::Ct2Variable::scalar_i16("h", -2),
                               tt::io::Ct2Variable::f32("d", {2}, zero), tt::io::Ct2Variable::f32("e", {2}, z2)});
  const std::string bytes = tt::test::read_file(tmp.file("model.bin"));
  // version 6; "S" as u16 length 2, 'S', NUL; revision 3; 4 stored variables; the first, "a/w".
  const std::string head("\x06\0\0\0\x02\0S\0\x03\0\0\0\x04\0\0\0\x04\0a/w\0\x02\x01\0\0\0\x02\0\0\0\0\x08\0\0\0", 36);
  CHECK(bytes.substr(0, head.size()) == head);
  const Ct2File f(tmp.file("model.bin"));
  CHECK(f.order == std::vector<std::string>{"a/w", "b/w", "d", "h"});  // c/w equals b/w; e equals d (0 == -0)
  CHECK(f.aliases == std::map<std::string, std::string>{{"c/w", "b/w"}, {"e", "d"}});  // [1, 2] is another shape
  CHECK(f.scalar("h") == -2);
  CHECK(f.f32("c/w") == std::vector<float>{1.5f, -2.0f});
}

TEST_CASE("export-ct2 stores every tt weight under CTranslate2's names: fused q/k/v, tied embeddings once",
          "[ct2]") {
  tt::test::TmpDir tmp;
  const auto c = small_config();
  const std::string model = save_model(tmp, "m", c);
  const auto r = tt::io::export_ct2(model, tmp.file("ct2"));
  CHECK(r.named_ids);
  CHECK(r.files == std::vector<std::string>{"model.bin", "config.json", "shared_vocabulary.json"});
  const Ct2File f(tmp.file("ct2/model.bin"));
  CHECK(f.version == 6);
  CHECK(f.spec == "TransformerSpec");
  CHECK(f.revision == 7);
  CHECK(std::is_sorted(f.order.begin(), f.order.end()));
  CHECK(r.variables == static_cast<int64_t>(f.vars.size()));
  CHECK(r.aliases == static_cast<int64_t>(f.aliases.size()));

  tt::io::SafetensorsReader w(model + "/model.safetensors");
  // One shared matrix: the decoder embedding is stored, the source embedding and output projection alias it.
  CHECK(f.aliases.at("encoder/embeddings_0/weight") == "decoder/embeddings/weight");
  CHECK(f.aliases.at("decoder/projection/weight") == "decoder/embeddings/weight");
  CHECK(f.f32("decoder/embeddings/weight") == w.read_f32("embeddings.shared.weight"));
  CHECK(f.f32("decoder/projection/bias") == std::vector<float>(12, 0.0f));
  CHECK(f.aliases.at("encoder/position_encodings/encodings") == "decoder/position_encodings/encodings");
  CHECK(f.f32("decoder/position_encodings/encodings") == tt::nn::sinusoidal_table(20, 16));

  const std::string e = "encoder.layers.1.self_attn.", d = "decoder.layers.0.cross_attn.";
  CHECK(f.shape("encoder/layer_1/self_attention/linear_0/weight") == std::vector<int64_t>{48, 16});
  CHECK(f.f32("encoder/layer_1/self_attention/linear_0/weight") ==
        concat({w.read_f32(e + "q_proj.weight"), w.read_f32(e + "k_proj.weight"), w.read_f32(e + "v_proj.weight")}));
  CHECK(f.f32("encoder/layer_1/self_attention/linear_0/bias") ==
        concat({w.read_f32(e + "q_proj.bias"), w.read_f32(e + "k_proj.bias"), w.read_f32(e + "v_proj.bias")}));
  CHECK(f.f32("encoder/layer_1/self_attention/linear_1/weight") == w.read_f32(e + "out_proj.weight"));
  CHECK(f.f32("decoder/layer_0/attention/linear_0/weight") == w.read_f32(d + "q_proj.weight"));
  CHECK(f.f32("decoder/layer_0/attention/linear_1/weight") ==
        concat({w.read_f32(d + "k_proj.weight"), w.read_f32(d + "v_proj.weight")}));
  CHECK(f.f32("decoder/layer_0/attention/linear_2/bias") == w.read_f32(d + "out_proj.bias"));
  CHECK(f.f32("decoder/layer_0/attention/layer_norm/gamma") == w.read_f32("decoder.layers.0.cross_attn_norm.weight"));
  CHECK(f.f32("encoder/layer_0/ffn/linear_1/weight") == w.read_f32("encoder.layers.0.ffn.fc2.weight"));
  CHECK(f.f32("encoder/layer_0/ffn/layer_norm/beta") == w.read_f32("encoder.layers.0.ffn_norm.bias"));
  CHECK_FALSE(f.vars.count("encoder/layer_2/ffn/linear_0/weight"));
  CHECK_FALSE(f.vars.count("encoder/layer_norm/gamma"));  // post-LN: no final norm
  CHECK(f.scalar("encoder/num_heads") == 2);
  CHECK(f.scalar("decoder/pre_norm") == 0);
  CHECK(f.scalar("decoder/scale_embeddings") == 1);
  CHECK(f.scalar("decoder/alignment_layer") == -1);

  const auto config = nlohmann::json::parse(tt::test::read_file(tmp.file("ct2/config.json")));
  CHECK(config["add_source_eos"] == true);
  CHECK(config["decoder_start_token"] == "<s>");
  CHECK(config["eos_token"] == "</s>");
  const auto vocab = nlohmann::json::parse(tt::test::read_file(tmp.file("ct2/shared_vocabulary.json")));
  CHECK(vocab == nlohmann::json{"<pad>", "<unk>", "<s>", "</s>", "t4", "t5", "t6", "t7", "t8", "t9", "t10", "t11"});
}

TEST_CASE("export-ct2: pre-LN, learned positions and separate vocabularies with their SentencePiece pieces", "[ct2]") {
  tt::test::TmpDir tmp;
  const std::string src_spm = tt::test::train_fixture_model(tmp, "unigram", 120, "src");
  const std::string tgt_spm = tt::test::train_fixture_model(tmp, "unigram", 90, "tgt");
  auto c = small_config();
  c.norm = tt::nn::NormPlacement::pre;
  c.positions = tt::nn::PositionKind::learned;
  c.shared_vocab = false;
  c.vocab_size_src = 120, c.vocab_size_tgt = 90;
  const std::string model = save_model(tmp, "m", c, {{"vocab", {{"source", "s.model"}, {"target", "t.model"}}}});
  std::filesystem::copy_file(src_spm, model + "/s.model");
  std::filesystem::copy_file(tgt_spm, model + "/t.model");
  const auto r = tt::io::export_ct2(model, tmp.file("ct2"));
  CHECK_FALSE(r.named_ids);
  const Ct2File f(tmp.file("ct2/model.bin"));
  tt::io::SafetensorsReader w(model + "/model.safetensors");
  CHECK(f.f32("encoder/embeddings_0/weight") == w.read_f32("embeddings.src.weight"));
  CHECK(f.shape("encoder/embeddings_0/weight") == std::vector<int64_t>{120, 16});
  CHECK(f.f32("decoder/embeddings/weight") == w.read_f32("embeddings.tgt.weight"));
  CHECK(f.aliases.at("decoder/projection/weight") == "decoder/embeddings/weight");
  CHECK(f.f32("encoder/position_encodings/encodings") == w.read_f32("embeddings.positions.weight"));
  CHECK(f.f32("decoder/layer_norm/gamma") == w.read_f32("decoder.final_norm.weight"));
  CHECK(f.f32("encoder/layer_norm/beta") == w.read_f32("encoder.final_norm.bias"));
  CHECK(f.scalar("encoder/pre_norm") == 1);

  const auto source = nlohmann::json::parse(tt::test::read_file(tmp.file("ct2/source_vocabulary.json")));
  const auto target = nlohmann::json::parse(tt::test::read_file(tmp.file("ct2/target_vocabulary.json")));
  const auto spm = tt::data::SpmTokenizer::load(tgt_spm);
  REQUIRE(source.size() == 120);
  REQUIRE(target.size() == 90);
  for (int i = 0; i < 90; ++i) CHECK(target[static_cast<size_t>(i)] == spm.id_to_piece(i));
  // Written as Python's json.dump writes it: non-ASCII escaped, no newline at the end.
  const std::string text = tt::test::read_file(tmp.file("ct2/target_vocabulary.json"));
  CHECK(text.find("\\u2581") != std::string::npos);
  CHECK(text.back() == ']');
}

TEST_CASE("export-ct2 refuses an existing output unless asked, and never replaces a folder of another kind", "[ct2]") {
  tt::test::TmpDir tmp;
  const std::string model = save_model(tmp, "m", small_config());
  tt::io::export_ct2(model, tmp.file("ct2"));
  CHECK_THROWS_WITH(tt::io::export_ct2(model, tmp.file("ct2")), Catch::Contains("already exists"));
  tt::io::Ct2ExportOptions replace;
  replace.replace = true;
  CHECK_NOTHROW(tt::io::export_ct2(model, tmp.file("ct2"), replace));
  CHECK_THROWS_WITH(tt::io::export_ct2(model, model, replace), Catch::Contains("not a CTranslate2 model directory"));
  CHECK(std::filesystem::exists(model + "/model.safetensors"));
  CHECK_THROWS_AS(tt::io::export_ct2(tmp.file("missing"), tmp.file("out")), tt::IoError);
  CHECK_FALSE(std::filesystem::exists(tmp.file("out")));
}

TEST_CASE("export-ct2 of an imported Marian model: swish, its logits bias, the halves table, vocab.json's pieces",
          "[ct2]") {
  tt::test::TmpDir tmp;
  const auto c = tt::io::import_marian(std::string(TT_TEST_DATA_DIR) + "/marian/tiny", tmp.file("m")).config;
  tt::io::export_ct2(tmp.file("m"), tmp.file("ct2"));
  const Ct2File f(tmp.file("ct2/model.bin"));
  tt::io::SafetensorsReader w(tmp.file("m/model.safetensors"));
  CHECK(f.scalar("encoder/activation") == 2);  // CTranslate2's SWISH
  CHECK(f.scalar("decoder/activation") == 2);
  CHECK(f.scalar("encoder/scale_embeddings") == 1);
  CHECK(f.f32("decoder/projection/bias") == w.read_f32("output.bias"));
  CHECK(f.f32("encoder/position_encodings/encodings") ==
        tt::nn::sinusoidal_table(c.max_positions, c.d_model, tt::nn::SinusoidalLayout::halves));
  const auto vocab = nlohmann::json::parse(tt::test::read_file(tmp.file("ct2/shared_vocabulary.json")));
  const auto ids = nlohmann::json::parse(tt::test::read_file(tmp.file("m/vocab.json")));
  REQUIRE(vocab.size() == ids.size());
  for (const auto& [piece, id] : ids.items()) CHECK(vocab[id.get<size_t>()] == piece);
  const auto config = nlohmann::json::parse(tt::test::read_file(tmp.file("ct2/config.json")));
  CHECK(config["decoder_start_token"] == "<pad>");  // Marian starts from its pad
  CHECK(config["eos_token"] == "</s>");
}
