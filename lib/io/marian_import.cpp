#include "io/marian_import.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "io/json_file.h"
#include "io/model_dir.h"
#include "io/output_dir.h"
#include "io/safetensors.h"
#include "io/vocabulary.h"
#include "nn/positional.h"
#include "nn/transformer.h"
#include "util/atomic_dir.h"
#include "util/error.h"
#include "util/file_bytes.h"
#include "util/file_kind.h"
#include "util/version.h"

namespace tt::io {

namespace fs = std::filesystem;

namespace {

std::string join(const std::string& dir, const std::string& name) { return (fs::path(dir) / name).string(); }

// The keys of a Transformers config.json, read with the defaults MarianConfig gives them; errors name the
// file and the key.
class HfConfig {
 public:
  HfConfig(nlohmann::json j, std::string path) : j_(std::move(j)), path_(std::move(path)) {
    if (!j_.is_object()) throw FormatError(path_ + ": expected a JSON object");
  }
  int integer(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end()) throw FormatError(path_ + ": no \"" + std::string(key) + "\"", "is this a MarianMTModel directory?");
    return checked_int(key, *it);
  }
  int integer(const char* key, int fallback) const {
    const auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? fallback : checked_int(key, *it);
  }
  bool boolean(const char* key, bool fallback) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) throw FormatError(where(key) + " must be true or false, got " + it->dump());
    return it->get<bool>();
  }
  float number(const char* key, float fallback) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return fallback;
    if (!it->is_number()) throw FormatError(where(key) + " must be a number, got " + it->dump());
    return it->get<float>();
  }
  std::string text(const char* key, const std::string& fallback) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return fallback;
    if (!it->is_string()) throw FormatError(where(key) + " must be a string, got " + it->dump());
    return it->get<std::string>();
  }
  // A key tt can express for one value only (the Marian default): any other is refused by name.
  void require_bool(const char* key, bool wanted, const std::string& why) const {
    if (boolean(key, wanted) != wanted)
      throw FormatError(where(key) + " is " + (wanted ? "false" : "true") + ": " + why, "tt cannot convert this model");
  }
  std::string where(const std::string& key) const { return path_ + ": \"" + key + "\""; }

 private:
  int checked_int(const char* key, const nlohmann::json& v) const {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > (int64_t{1} << 30))
      throw FormatError(where(key) + " must be a non-negative integer, got " + v.dump());
    return static_cast<int>(v.get<int64_t>());
  }
  nlohmann::json j_;
  std::string path_;
};

nn::Activation activation_of(const HfConfig& hf) {
  const std::string a = hf.text("activation_function", "gelu");
  if (a == "swish" || a == "silu") return nn::Activation::swish;
  if (a == "relu") return nn::Activation::relu;
  if (a == "gelu") return nn::Activation::gelu;
  throw FormatError(hf.where("activation_function") + " is \"" + a + "\"", "tt runs relu, swish (silu) and gelu");
}

// The tensors of the Transformers file, read as float32 once each; `used` records which were taken.
class HfWeights {
 public:
  explicit HfWeights(const std::string& path) : reader_(path) {
    prefix_ = reader_.find("model.encoder.layers.0.fc1.weight") ? "model." : "";
  }
  const std::string& path() const { return reader_.path(); }
  bool has(const std::string& name) const { return reader_.find(prefix_ + name) || reader_.find(name); }
  // `name` without the "model." prefix MarianMTModel puts before the encoder and decoder (lm_head and
  // final_logits_bias have none).
  std::vector<float> read(const std::string& name, std::vector<int64_t>* shape = nullptr) {
    const TensorEntry* e = reader_.find(prefix_ + name);
    if (!e) e = reader_.find(name);
    if (!e) throw FormatError(reader_.path() + ": no tensor named '" + prefix_ + name + "'", "is this a MarianMTModel?");
    used_.insert(e->name);
    if (shape) *shape = e->shape;
    std::vector<float> v = reader_.read_f32(e->name);  // F32, or an error naming the tensor and its dtype
    require_finite(v.data(), e->shape, reader_.path(), e->name, "the model file is damaged");
    return v;
  }
  // Every tensor the file holds that nothing read: refused, so nothing is silently dropped.
  void require_all_used() const {
    for (const TensorEntry& e : reader_.tensors())
      if (!used_.count(e.name))
        throw FormatError(reader_.path() + ": tensor '" + e.name + "' " + e.shape_str() +
                              " has no place in tt's Transformer",
                          "tt cannot convert this model");
  }

 private:
  SafetensorsReader reader_;
  std::string prefix_;
  std::set<std::string> used_;
};

void require_same(const std::vector<float>& a, const std::vector<float>& b, const std::string& what,
                  const std::string& path) {
  if (a != b) throw FormatError(path + ": " + what, "tt cannot convert this model");
}

struct Vocabularies {
  std::string source_spm, target_spm, source_ids, target_ids;  // file names in the Marian directory
};

Vocabularies find_vocabularies(const std::string& hf_dir) {
  Vocabularies v{"source.spm", "target.spm", "vocab.json", "vocab.json"};
  if (util::regular_file_exists(join(hf_dir, "target_vocab.json"))) v.target_ids = "target_vocab.json";  // separate_vocabs
  for (const std::string* name : {&v.source_spm, &v.target_spm, &v.source_ids, &v.target_ids})
    if (!util::regular_file_exists(join(hf_dir, *name)))
      throw FormatError(hf_dir + ": no " + *name, "a MarianMTModel directory holds source.spm, target.spm and vocab.json");
  return v;
}

// Transformers' name of tt's tensor `name` inside one layer ("self_attn_norm.weight" -> ...).
std::string hf_layer_name(const std::string& rest) {
  static const std::pair<const char*, const char*> renames[] = {{"self_attn_norm.", "self_attn_layer_norm."},
                                                                {"cross_attn_norm.", "encoder_attn_layer_norm."},
                                                                {"cross_attn.", "encoder_attn."},
                                                                {"ffn_norm.", "final_layer_norm."},
                                                                {"ffn.", ""}};
  for (const auto& [tt_name, hf_name] : renames)
    if (rest.rfind(tt_name, 0) == 0) return hf_name + rest.substr(std::string(tt_name).size());
  return rest;
}

// Transformers' name (without the "model." prefix) of tt's tensor `tt_name` in a layer.
std::string hf_name(const std::string& tt_name) {
  const size_t layers = tt_name.find(".layers.");
  if (layers == std::string::npos) return tt_name;
  const size_t dot = tt_name.find('.', layers + 8);  // after the layer index
  return tt_name.substr(0, dot + 1) + hf_layer_name(tt_name.substr(dot + 1));
}

}  // namespace

MarianImportResult import_marian(const std::string& hf_dir, const std::string& out_dir,
                                 const MarianImportOptions& options) {
  const std::string config_path = join(hf_dir, "config.json");
  const std::string weights_path = join(hf_dir, "model.safetensors");
  if (!util::regular_file_exists(weights_path)) {
    const std::string hint = util::regular_file_exists(join(hf_dir, "pytorch_model.bin"))
                                 ? "re-save it with safetensors: python3 -c \"from transformers import MarianMTModel; "
                                   "MarianMTModel.from_pretrained('DIR').save_pretrained('DIR', safe_serialization=True)\""
                                 : "is this a MarianMTModel directory?";
    throw FormatError(hf_dir + ": no model.safetensors", hint);
  }
  const HfConfig hf(read_json_file(config_path, "is " + hf_dir + " a MarianMTModel directory?"), config_path);
  if (const std::string type = hf.text("model_type", "marian"); type != "marian")
    throw FormatError(hf.where("model_type") + " is \"" + type + "\", expected \"marian\"",
                      "tt-convert import-marian reads MarianMTModel directories");
  // BART-family keys older Marian conversions still carry: only their Marian values are convertible.
  hf.require_bool("normalize_before", false, "pre-LN layers are not Marian's");
  hf.require_bool("add_final_layer_norm", false, "a final layer norm after post-LN layers");
  hf.require_bool("normalize_embedding", false, "a layer norm on the embeddings");
  hf.require_bool("static_position_embeddings", true, "learned positions are not Marian's");
  hf.require_bool("add_bias_logits", false, "a second logits bias");
  hf.require_bool("tie_word_embeddings", true, "an output projection of its own, untied from the target embedding");

  const Vocabularies files = find_vocabularies(hf_dir);
  const PieceTable source_ids = PieceTable::load(join(hf_dir, files.source_ids));
  const PieceTable target_ids = PieceTable::load(join(hf_dir, files.target_ids));

  nn::ModelConfig c;
  c.vocab_size_src = hf.integer("vocab_size");
  c.vocab_size_tgt = hf.integer("decoder_vocab_size", c.vocab_size_src);
  c.shared_vocab = hf.boolean("share_encoder_decoder_embeddings", true);
  if (c.shared_vocab && c.vocab_size_src != c.vocab_size_tgt)
    throw FormatError(hf.where("decoder_vocab_size") + " (" + std::to_string(c.vocab_size_tgt) +
                      ") differs from vocab_size (" + std::to_string(c.vocab_size_src) +
                      ") with shared embeddings (share_encoder_decoder_embeddings)");
  c.d_model = hf.integer("d_model");
  c.n_layers_enc = hf.integer("encoder_layers");
  c.n_layers_dec = hf.integer("decoder_layers");
  c.heads = hf.integer("encoder_attention_heads");
  if (const int h = hf.integer("decoder_attention_heads"); h != c.heads)
    throw FormatError(hf.where("decoder_attention_heads") + " (" + std::to_string(h) + ") differs from " +
                      "encoder_attention_heads (" + std::to_string(c.heads) + ")", "tt has one head count");
  c.d_ff = hf.integer("encoder_ffn_dim");
  if (const int f = hf.integer("decoder_ffn_dim"); f != c.d_ff)
    throw FormatError(hf.where("decoder_ffn_dim") + " (" + std::to_string(f) + ") differs from encoder_ffn_dim (" +
                      std::to_string(c.d_ff) + ")", "tt has one feed-forward size");
  c.max_positions = hf.integer("max_position_embeddings");
  c.dropout = hf.number("dropout", 0.1f);
  c.attention_dropout = hf.number("attention_dropout", 0.0f);
  c.relu_dropout = hf.number("activation_dropout", 0.0f);
  c.activation = activation_of(hf);
  c.scale_embeddings = hf.boolean("scale_embedding", false);
  c.sinusoidal_layout = nn::SinusoidalLayout::halves;
  c.positions = nn::PositionKind::sinusoidal;
  c.norm = nn::NormPlacement::post;
  c.pad_id = hf.integer("pad_token_id");
  c.eos_id = hf.integer("eos_token_id");
  c.bos_id = hf.integer("decoder_start_token_id", c.pad_id);
  c.unk_id = source_ids.unk_id;
  if (target_ids.unk_id != c.unk_id)
    throw FormatError(join(hf_dir, files.target_ids) + ": \"<unk>\" is " + std::to_string(target_ids.unk_id) +
                      ", but " + std::to_string(c.unk_id) + " in " + files.source_ids);
  for (const auto& [table, size, name] : {std::tuple{&source_ids, c.vocab_size_src, files.source_ids},
                                          std::tuple{&target_ids, c.vocab_size_tgt, files.target_ids}})
    if (static_cast<int>(table->pieces.size()) != size)
      throw FormatError(join(hf_dir, name) + " has " + std::to_string(table->pieces.size()) +
                        " pieces, but config.json says " + std::to_string(size));

  HfWeights w(weights_path);
  // The embeddings: one table or two, every copy Transformers stored checked equal.
  const char* source_names[] = {"shared.weight", "encoder.embed_tokens.weight"};
  const char* target_names[] = {"decoder.embed_tokens.weight"};
  std::vector<float> source_table, target_table;
  for (const char* name : source_names) {
    if (!w.has(name)) continue;
    std::vector<float> t = w.read(name);
    if (source_table.empty()) source_table = std::move(t);
    else require_same(source_table, t, std::string(name) + " differs from the shared embedding", w.path());
  }
  if (w.has(target_names[0])) target_table = w.read(target_names[0]);
  if (c.shared_vocab) {
    if (source_table.empty()) source_table = target_table;
    if (!target_table.empty())
      require_same(source_table, target_table, "the decoder's embedding differs from the shared one", w.path());
    target_table = source_table;
  } else if (source_table.empty() || target_table.empty()) {
    throw FormatError(w.path() + ": separate embeddings need encoder.embed_tokens.weight and decoder.embed_tokens.weight");
  }
  if (source_table.empty()) throw FormatError(w.path() + ": no embedding table (shared.weight)");
  if (w.has("lm_head.weight"))
    require_same(w.read("lm_head.weight"), target_table, "lm_head.weight differs from the target embedding (untied)",
                 w.path());
  std::vector<float> logits_bias;
  if (w.has("final_logits_bias")) {
    logits_bias = w.read("final_logits_bias");
    c.output_bias = std::any_of(logits_bias.begin(), logits_bias.end(), [](float x) { return x != 0.0f; });
  }
  try {
    c.validate();
  } catch (const ConfigError& e) {
    throw FormatError(config_path + ": the model it describes is not one tt can run (" + e.what() + ")");
  }
  // The position tables, where stored, must be the sinusoids tt computes (in halves).
  const std::vector<float> sinusoids = nn::sinusoidal_table(c.max_positions, c.d_model, c.sinusoidal_layout);
  for (const char* name : {"encoder.embed_positions.weight", "decoder.embed_positions.weight"}) {
    if (!w.has(name)) continue;
    std::vector<int64_t> shape;
    const std::vector<float> table = w.read(name, &shape);
    float worst = table.size() == sinusoids.size() ? 0.0f : INFINITY;
    for (size_t i = 0; i < table.size() && i < sinusoids.size(); ++i) worst = std::max(worst, std::fabs(table[i] - sinusoids[i]));
    if (!(worst <= 1e-3f))
      throw FormatError(w.path() + ": " + name + " is not the sinusoidal position table (halves layout)",
                        "tt cannot convert this model");
  }

  // tt's tensors, in its own order and shapes, each from its Transformers name.
  std::deque<std::vector<float>> values;
  std::vector<TensorRef> refs;
  for (const auto& [name, shape] : nn::Transformer::parameter_shapes(c)) {
    std::vector<int64_t> dims;
    for (int i = 0; i < shape.rank(); ++i) dims.push_back(shape[i]);
    std::vector<int64_t> stored = dims;
    if (name == "embeddings.shared.weight" || name == "embeddings.src.weight") values.push_back(source_table);
    else if (name == "embeddings.tgt.weight") values.push_back(target_table);
    else if (name == "output.bias") values.push_back(logits_bias);
    else values.push_back(w.read(hf_name(name), &stored));
    if (static_cast<int64_t>(values.back().size()) != shape.numel() || (stored != dims && name != "output.bias"))
      throw FormatError(w.path() + ": the tensor for tt's " + name + " has " + std::to_string(values.back().size()) +
                        " values, expected " + shape.str());
    refs.push_back(TensorRef{name, StDType::f32, dims, values.back().data()});
  }
  w.require_all_used();

  check_output_dir(out_dir, options.replace, {config_file_name}, "a tt model directory");
  util::AtomicDirectory dir(out_dir);
  const nlohmann::json vocab = {{"source", "source.spm.model"},
                                {"target", "target.spm.model"},
                                {"source_ids", files.source_ids},
                                {"target_ids", files.target_ids}};
  MarianImportResult result;
  result.files = {config_file_name, weights_file_name, "source.spm.model", "target.spm.model", files.source_ids};
  if (files.target_ids != files.source_ids) result.files.push_back(files.target_ids);
  util::write_file_bytes(dir.file("source.spm.model"), util::read_file_bytes(join(hf_dir, files.source_spm)));
  util::write_file_bytes(dir.file("target.spm.model"), util::read_file_bytes(join(hf_dir, files.target_spm)));
  for (const std::string& name : {files.source_ids, files.target_ids})
    util::write_file_bytes(dir.file(name), util::read_file_bytes(join(hf_dir, name)));
  write_safetensors(dir.file(weights_file_name), refs, {{"format", "pt"}, {"tt_version", tt::version()}});
  const std::string from = fs::absolute(hf_dir).lexically_normal().string();
  write_model_config(dir.path(), c, {{"vocab", vocab}, {"imported", {{"format", "marian"}, {"from", from}}}});
  dir.commit();
  result.config = c;
  result.tensors = static_cast<int>(refs.size());
  return result;
}

}  // namespace tt::io
