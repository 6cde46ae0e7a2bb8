// tt-convert import-marian on a tiny MarianMTModel with random weights (tests/data/marian/tiny, made by
// scripts/make-marian-fixture.py with Transformers; its expected.json holds what Transformers computed):
// the tokenizer's ids, the logits, greedy and beam search, the tools that read the imported model, and the
// refusals that keep an unconvertible model from being converted wrongly.
#include <catch2/catch.hpp>
#include <algorithm>
#include <deque>
#include <tuple>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backend/backend.h"
#include "backend/cpu/packed_gemm.h"
#include "backend/quantized_weight.h"
#include "io/marian_import.h"
#include "io/model_dir.h"
#include "io/model_vocab.h"
#include "io/vocabulary.h"
#include "io/safetensors.h"
#include "nn/transformer.h"
#include "support/ids_text.h"
#include "support/run_command.h"
#include "support/tmp_dir.h"
#include "tensor/arena.h"
#include "util/error.h"

namespace fs = std::filesystem;
using tt::test::quoted;
using tt::test::run_command;
using tt::test::tool;

namespace {

const std::string kFixture = std::string(TT_TEST_DATA_DIR) + "/marian/tiny";

const nlohmann::json& expected() {
  static const nlohmann::json j = nlohmann::json::parse(tt::test::read_file(kFixture + "/expected.json"));
  return j;
}

std::vector<int32_t> ids_of(const nlohmann::json& j) { return j.get<std::vector<int32_t>>(); }

std::vector<std::vector<int32_t>> parse_id_lines(const std::string& text) {
  std::vector<std::vector<int32_t>> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    lines.emplace_back();
    for (int32_t id; words >> id;) lines.back().push_back(id);
  }
  return lines;
}

std::string sources() {
  std::string text;
  for (const auto& line : expected()["lines"]) text += line["source"].get<std::string>() + "\n";
  return text;
}

// tt-translate on the fixture's lines with Transformers' settings: no length penalty, at most 40 pieces.
std::string translate(const std::string& model, const std::string& flags, const std::string& input) {
  const auto r = run_command(tool("tt-translate") + " -q -m " + quoted(model) +
                                 " --length-penalty none --max-len-a 0 --max-len-b 40 " + flags,
                             input);
  INFO(r.err);
  REQUIRE(r.status == 0);
  return r.out;
}

}  // namespace

TEST_CASE("import-marian: the config tt derives, and the tokenizer's ids through vocab.json", "[io][marian]") {
  tt::test::TmpDir tmp;
  const auto result = tt::io::import_marian(kFixture, tmp.file("model"));
  const tt::nn::ModelConfig& c = result.config;
  CHECK(c.activation == tt::nn::Activation::swish);
  CHECK(c.sinusoidal_layout == tt::nn::SinusoidalLayout::halves);
  CHECK(c.scale_embeddings);
  CHECK(c.output_bias);  // the fixture's final_logits_bias is not zero
  CHECK(c.shared_vocab);
  CHECK(c.pad_id == expected()["pad_id"].get<int>());
  CHECK(c.bos_id == expected()["decoder_start_id"].get<int>());
  CHECK(c.eos_id == expected()["eos_id"].get<int>());
  CHECK(c.unk_id == expected()["unk_id"].get<int>());
  nlohmann::json full;
  CHECK(tt::nn::to_json(tt::io::load_model_config(tmp.file("model"), &full)) == tt::nn::to_json(c));
  CHECK(full["vocab"]["source_ids"] == "vocab.json");

  const tt::io::ModelTokenizers vocab = tt::io::load_tokenizers(tmp.file("model"), full, c);
  for (const auto& line : expected()["lines"]) {
    std::vector<int32_t> want = ids_of(line["source_ids"]);
    want.pop_back();  // Transformers' tokenizer appends </s>; tt's translator does
    const std::vector<int> got = vocab.source.encode_ids(line["source"].get<std::string>());
    CHECK(std::vector<int32_t>(got.begin(), got.end()) == want);
  }
  // A piece the SentencePiece model knows but vocab.json lacks is <unk>, as in Marian's tokenizer.
  REQUIRE(!expected()["removed_pieces"].empty());
  for (const auto& piece : expected()["removed_pieces"])
    CHECK(vocab.source.piece_to_id(piece.get<std::string>()) == c.unk_id);
}

TEST_CASE("import-marian: logits within 1e-4 of Transformers' (relative to the row), teacher-forced on its greedy output",
          "[io][marian]") {
  tt::test::TmpDir tmp;
  const auto c = tt::io::import_marian(kFixture, tmp.file("model")).config;
  auto backend = tt::backend::make_backend("cpu", 2);
  tt::nn::Transformer model(c, *backend, tt::nn::Usage::inference);
  tt::io::load_model_weights(tmp.file("model"), model.params());
  const auto& lines = expected()["lines"];
  int checked = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].contains("logits")) continue;
    const auto src = ids_of(lines[i]["source_ids"]);
    std::vector<int32_t> tgt{c.bos_id};
    for (int32_t id : ids_of(lines[i]["greedy"])) tgt.push_back(id);
    const auto& want = lines[i]["logits"];
    REQUIRE(want.size() == tgt.size());
    tt::nn::Batch b;
    b.B = 1;
    b.S = static_cast<int>(src.size());
    b.T = static_cast<int>(tgt.size());
    b.src = src;
    b.src_lengths = {b.S};
    b.tgt_in = tgt;
    b.tgt_out.assign(tgt.size(), c.pad_id);
    b.tgt_lengths = {b.T};
    b.pad_id = c.pad_id;
    tt::tensor::Arena arena(*backend);
    const std::vector<float> logits = model.forward_logits(b, arena).to_host_f32();
    // Per row, relative to its largest logit: this fixture's logits reach |28|, where float32 itself is
    // this coarse (Transformers' float32 logits differ from its float64 ones by up to 8.5e-4 here).
    double worst = 0;
    for (int t = 0; t < b.T; ++t) {
      double scale = 1;
      for (int v = 0; v < c.vocab_size_tgt; ++v) scale = std::max(scale, std::fabs(want[t][v].get<double>()));
      for (int v = 0; v < c.vocab_size_tgt; ++v) {
        if (v == c.pad_id) continue;  // (Transformers' generate bans it; its logit is the bias alone here)
        const double d = std::fabs(double(logits[size_t(t) * c.vocab_size_tgt + v]) - want[t][v].get<double>());
        worst = std::max(worst, d / scale);
      }
    }
    INFO("line " << i << ": largest difference " << worst << " of the row's largest logit");
    CHECK(worst < 1e-4);
    ++checked;
  }
  CHECK(checked >= 2);
}

TEST_CASE("import-marian: greedy search gives Transformers' ids on every line, beam 4 its output or a better one",
          "[io][marian][cli]") {
  tt::test::TmpDir tmp;
  REQUIRE(run_command(tool("tt-convert") + " import-marian -q " + quoted(kFixture) + " -o " + quoted(tmp.file("m"))).status == 0);
  const auto& lines = expected()["lines"];
  const auto greedy = parse_id_lines(translate(tmp.file("m"), "--beam 1 --output-format ids", sources()));
  REQUIRE(greedy.size() == lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    INFO("line " << i << ": " << lines[i]["source"]);
    CHECK(greedy[i] == ids_of(lines[i]["greedy"]));
  }
  // The text: Transformers drops <unk> when it decodes (skip_special_tokens), SentencePiece writes ⁇.
  std::istringstream text(translate(tmp.file("m"), "--beam 1", sources()));
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line;
    std::getline(text, line);
    const auto ids = ids_of(lines[i]["greedy"]);
    if (std::find(ids.begin(), ids.end(), expected()["unk_id"].get<int32_t>()) == ids.end())
      CHECK(line == lines[i]["greedy_text"].get<std::string>());
  }

  // Beam 4, the algorithm Transformers runs (4 open hypotheses until 4 have finished): where the outputs
  // differ, tt's scores at least as well under the model (a search miss on Transformers' side).
  const auto beam = parse_id_lines(translate(tmp.file("m"), "--beam 4 --full-beam --output-format ids", sources()));
  REQUIRE(beam.size() == lines.size());
  size_t same = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto theirs = ids_of(lines[i]["beam4"]);
    if (beam[i] == theirs) {
      ++same;
      continue;
    }
    tmp.write("targets", tt::test::ids_text(beam[i]) + "\n" + tt::test::ids_text(theirs) + "\n");
    const std::string src = lines[i]["source"].get<std::string>() + "\n";
    // Each line of --score's output starts with the target's score.
    std::istringstream s(run_command(tool("tt-translate") + " -q -m " + quoted(tmp.file("m")) +
                                         " --length-penalty none --score " + quoted(tmp.file("targets")),
                                     src + src)
                             .out);
    std::string first, second;
    std::getline(s, first);
    std::getline(s, second);
    const double ours = std::stod(first), transformers = std::stod(second);
    INFO("line " << i << ": tt " << ours << ", Transformers " << transformers);
    CHECK(ours >= transformers);
  }
  CHECK(same * 10 >= lines.size() * 9);
}

namespace {

// A copy of the fixture, to spoil.
std::string copy_fixture(const tt::test::TmpDir& tmp, const std::string& name) {
  const std::string dir = tmp.file(name);
  fs::create_directories(dir);
  for (const auto& f : fs::directory_iterator(kFixture)) fs::copy_file(f.path(), dir + "/" + f.path().filename().string());
  return dir;
}

}  // namespace

TEST_CASE("a multilingual model's target language: a leading >>xx<< is one token, as Marian's tokenizer reads it",
          "[io][marian]") {
  tt::test::TmpDir tmp;
  auto table = nlohmann::json::parse(tt::test::read_file(kFixture + "/vocab.json"));
  const int code = static_cast<int>(table.size());
  table[">>deu<<"] = code;
  const std::string path = tmp.write("vocab.json", table.dump());
  const tt::io::Vocabulary v(tt::data::SpmTokenizer::load(kFixture + "/source.spm"), tt::io::PieceTable::load(path));
  const std::vector<int> plain = v.encode_ids("A man in a hat.");
  std::vector<int> with_code{code};
  with_code.insert(with_code.end(), plain.begin(), plain.end());
  CHECK(v.encode_ids(">>deu<< A man in a hat.") == with_code);
  CHECK(v.encode_ids(">>fra<< A man in a hat.").front() == v.piece_to_id("<unk>"));  // a code the model lacks
  CHECK(v.encode_ids("A man >>deu<< in a hat.") == v.encode_ids("A man  in a hat."));  // taken out, not a token
  // Without a ">>...<<" span the text is only segmented (">>" without "<<", nothing between them).
  auto segmented = [&](const std::string& text) {
    std::vector<int> ids;
    for (const auto& piece : v.spm().encode_pieces(text)) ids.push_back(v.piece_to_id(piece));
    return ids;
  };
  CHECK(v.encode_ids("A >> B") == segmented("A >> B"));
  CHECK(v.encode_ids(">><< A") == segmented(">><< A"));
}

TEST_CASE("import-marian refuses what tt cannot express, naming the key or tensor", "[io][marian]") {
  tt::test::TmpDir tmp;
  const std::vector<std::tuple<std::string, nlohmann::json, std::string>> cases = {
      {"model_type", "bart", "\"model_type\" is \"bart\""},
      {"activation_function", "gelu_new", "\"activation_function\" is \"gelu_new\""},
      {"normalize_before", true, "\"normalize_before\" is true"},
      {"normalize_embedding", true, "\"normalize_embedding\" is true"},
      {"tie_word_embeddings", false, "\"tie_word_embeddings\" is false"},
      {"decoder_attention_heads", 2, "\"decoder_attention_heads\" (2) differs"},
      {"decoder_ffn_dim", 32, "\"decoder_ffn_dim\" (32) differs"},
      {"vocab_size", 400, "differs from vocab_size (400)"},
      {"decoder_start_token_id", 459, "bos_id (459) must be a valid id"},
      {"d_model", nullptr, "no \"d_model\""},
      {"d_model", "32", "\"d_model\" must be a non-negative integer"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& [key, value, message] = cases[i];
    INFO(key << " = " << value.dump());
    const std::string dir = copy_fixture(tmp, "hf-" + std::to_string(i));
    auto j = nlohmann::json::parse(tt::test::read_file(dir + "/config.json"));
    if (value.is_null()) j.erase(key);
    else j[key] = value;
    std::ofstream(dir + "/config.json") << j.dump();
    CHECK_THROWS_AS(tt::io::import_marian(dir, tmp.file("out")), tt::FormatError);
    CHECK_THROWS_WITH(tt::io::import_marian(dir, tmp.file("out")), Catch::Contains(message));
    CHECK(!fs::exists(tmp.file("out")));
  }

  // A tensor with no place in tt's network (here a layer norm on the embeddings) is never dropped.
  const std::string extra = copy_fixture(tmp, "extra");
  {
    tt::io::SafetensorsReader r(kFixture + "/model.safetensors");
    std::deque<std::vector<float>> values;
    std::vector<tt::io::TensorRef> refs;
    for (const auto& e : r.tensors()) {
      values.push_back(r.read_f32(e.name));
      refs.push_back({e.name, tt::io::StDType::f32, e.shape, values.back().data()});
    }
    const std::vector<float> gain(32, 1.0f);
    refs.push_back({"model.encoder.layernorm_embedding.weight", tt::io::StDType::f32, {32}, gain.data()});
    tt::io::write_safetensors(extra + "/model.safetensors", refs);
  }
  CHECK_THROWS_WITH(tt::io::import_marian(extra, tmp.file("out")),
                    Catch::Contains("'model.encoder.layernorm_embedding.weight' [32] has no place"));

  // PyTorch weights only: the message says how to re-save them.
  const std::string bin = copy_fixture(tmp, "bin");
  fs::rename(bin + "/model.safetensors", bin + "/pytorch_model.bin");
  CHECK_THROWS_WITH(tt::io::import_marian(bin, tmp.file("out")), Catch::Contains(bin + ": no model.safetensors"));
  const auto r = run_command(tool("tt-convert") + " import-marian " + quoted(bin) + " -o " + quoted(tmp.file("out")));
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("save_pretrained('DIR', safe_serialization=True)"));
  CHECK(!fs::exists(tmp.file("out")));
}

TEST_CASE("a piece table is a dense map with <unk>, anything else is refused naming the file", "[io][marian]") {
  tt::test::TmpDir tmp;
  const auto t = tt::io::PieceTable::load(tmp.write("ok.json", R"({"</s>": 0, "<unk>": 1, "a": 2, "<pad>": 3})"));
  CHECK(t.pieces == std::vector<std::string>{"</s>", "<unk>", "a", "<pad>"});
  CHECK(t.unk_id == 1);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"([1, 2])", "expected a JSON object"},
      {R"({"<unk>": 0, "a": 0})", "id 0 is given to both"},
      {R"({"<unk>": 0, "a": 2})", "the id of \"a\" is 2"},
      {R"({"<unk>": 0, "a": "1"})", "the id of \"a\""},
      {R"({"x": 0, "a": 1})", "no \"<unk>\""},
      {R"({"<unk>": 0,)", "not valid JSON"},
  };
  for (const auto& [text, message] : bad) {
    INFO(text);
    const std::string path = tmp.write("bad.json", text);
    CHECK_THROWS_AS(tt::io::PieceTable::load(path), tt::FormatError);
    CHECK_THROWS_WITH(tt::io::PieceTable::load(path), Catch::Contains(path) && Catch::Contains(message));
  }
}

TEST_CASE("the tools read an imported model: quantize, average, attnviz", "[io][marian][cli]") {
  tt::test::TmpDir tmp;
  const std::string m = tmp.file("m");
  REQUIRE(run_command(tool("tt-convert") + " import-marian -q " + quoted(kFixture) + " -o " + quoted(m)).status == 0);
  // A second import over it needs --force; with it, the same files again.
  CHECK(run_command(tool("tt-convert") + " import-marian -q " + quoted(kFixture) + " -o " + quoted(m)).status == 1);
  REQUIRE(run_command(tool("tt-convert") + " import-marian -q --force " + quoted(kFixture) + " -o " + quoted(m)).status == 0);

  // int8 on disk translates as --compute-type int8 does on the float32 import on CPUs whose int8 products
  // have VNNI (127 levels both ways). Without VNNI the stored model is dequantized and quantized again to
  // 63 levels at load (man tt-convert): a double rounding, so only a line per line is promised there.
  REQUIRE(run_command(tool("tt-convert") + " quantize -q " + quoted(m) + " --type int8 -o " + quoted(tmp.file("q"))).status == 0);
  const std::string input = sources(), stored = translate(tmp.file("q"), "--beam 4", input);
  if (tt::backend::cpu::PackedGemm::int8_weight_levels() == tt::backend::QuantizedWeight::kInt8Levels)
    CHECK(stored == translate(m, "--beam 4 --compute-type int8", input));
  else
    CHECK(std::count(stored.begin(), stored.end(), '\n') == std::count(input.begin(), input.end(), '\n'));

  // Averaging a model with a copy of itself gives its weights back, piece tables carried along.
  fs::copy(m, tmp.file("m2"));
  REQUIRE(run_command(tool("tt-average") + " -q " + quoted(m) + " " + quoted(tmp.file("m2")) + " -o " +
                      quoted(tmp.file("avg"))).status == 0);
  CHECK(fs::exists(tmp.file("avg/vocab.json")));
  CHECK(translate(tmp.file("avg"), "--beam 4", sources()) == translate(m, "--beam 4", sources()));

  // Attention maps name the pieces through vocab.json.
  const auto viz = run_command(tool("tt-attnviz") + " -q -m " + quoted(m) + " --max-len-b 5", "A man in a hat.\n");
  INFO(viz.err);
  REQUIRE(viz.status == 0);
  CHECK_THAT(viz.out, Catch::Contains("\u2581man"));
}

TEST_CASE("tt-train refuses to fine-tune an imported model, naming its piece table", "[io][marian][cli]") {
  tt::test::TmpDir tmp;
  REQUIRE(run_command(tool("tt-convert") + " import-marian -q " + quoted(kFixture) + " -o " + quoted(tmp.file("m"))).status == 0);
  const std::string text = tmp.write("t.txt", sources());
  const auto r = run_command(tool("tt-train") + " --init " + quoted(tmp.file("m")) + " --train " + quoted(text) + " " +
                             quoted(text) + " -o " + quoted(tmp.file("run")));
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("piece table (" + tmp.file("m") + "/vocab.json)"));
  CHECK(!fs::exists(tmp.file("run")));
}
