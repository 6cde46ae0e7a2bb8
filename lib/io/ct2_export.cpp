#include "io/ct2_export.h"

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "data/spm_tokenizer.h"
#include "io/ct2_model_file.h"
#include "io/model_dir.h"
#include "io/model_vocab.h"
#include "io/output_dir.h"
#include "io/quantized_model.h"
#include "io/safetensors.h"
#include "nn/config.h"
#include "nn/positional.h"
#include "util/atomic_dir.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace tt::io {

namespace fs = std::filesystem;

namespace {

// The tt weights by name, read once, checked finite.
class Weights {
 public:
  explicit Weights(const std::string& path) : reader_(path) {}
  const std::vector<float>& operator()(const std::string& name) {
    auto it = values_.find(name);
    if (it != values_.end()) return it->second;
    std::vector<float> v = reader_.read_f32(name);
    require_finite(v.data(), reader_.get(name).shape, reader_.path(), name, "export a checkpoint that did not diverge");
    return values_.emplace(name, std::move(v)).first->second;
  }
  std::vector<int64_t> shape(const std::string& name) const { return reader_.get(name).shape; }

 private:
  SafetensorsReader reader_;
  std::map<std::string, std::vector<float>> values_;
};

class SpecBuilder {
 public:
  SpecBuilder(Weights& w, std::vector<Ct2Variable>& out) : w_(w), out_(out) {}

  void copy(const std::string& to, const std::string& from) {
    out_.push_back(Ct2Variable::f32(to, w_.shape(from), w_(from).data()));
  }
  // Rows of several [n_i, d] weights (or [n_i] biases) stacked into one.
  void stack(const std::string& to, const std::vector<std::string>& from) {
    std::vector<float> all;
    std::vector<int64_t> shape = w_.shape(from[0]);
    shape[0] = 0;
    for (const auto& name : from) {
      const auto& v = w_(name);
      all.insert(all.end(), v.begin(), v.end());
      shape[0] += w_.shape(name)[0];
    }
    out_.push_back(Ct2Variable::f32(to, shape, all.data()));
  }
  void linear(const std::string& to, const std::string& from) {
    copy(to + "/weight", from + ".weight");
    copy(to + "/bias", from + ".bias");
  }
  void norm(const std::string& to, const std::string& from) {
    copy(to + "/gamma", from + ".weight");
    copy(to + "/beta", from + ".bias");
  }
  void attention(const std::string& to, const std::string& from, bool self) {
    auto names = [&](const std::string& parts, const char* kind) {
      std::vector<std::string> v;
      for (char p : parts) v.push_back(from + "." + p + "_proj." + kind);
      return v;
    };
    if (self) {
      stack(to + "/linear_0/weight", names("qkv", "weight"));
      stack(to + "/linear_0/bias", names("qkv", "bias"));
      linear(to + "/linear_1", from + ".out_proj");
    } else {
      linear(to + "/linear_0", from + ".q_proj");
      stack(to + "/linear_1/weight", names("kv", "weight"));
      stack(to + "/linear_1/bias", names("kv", "bias"));
      linear(to + "/linear_2", from + ".out_proj");
    }
  }

 private:
  Weights& w_;
  std::vector<Ct2Variable>& out_;
};

// Each side's flags, as CTranslate2 4.x's converters write them.
void side_flags(std::vector<Ct2Variable>& v, const std::string& side, const nn::ModelConfig& c) {
  // CTranslate2's ActivationType: RELU 0, GELUTanh 1, SWISH 2, GELU 3.
  const int8_t activation = c.activation == nn::Activation::swish ? 2 : c.activation == nn::Activation::gelu ? 3 : 0;
  v.push_back(Ct2Variable::scalar_i8(side + "/activation", activation));
  v.push_back(Ct2Variable::scalar_i16(side + "/num_heads", static_cast<int16_t>(c.heads)));
  v.push_back(Ct2Variable::scalar_i8(side + "/pre_norm", c.norm == nn::NormPlacement::pre));
  v.push_back(Ct2Variable::scalar_i8(side + "/scale_embeddings", c.scale_embeddings));
  if (side == "encoder") {
    v.push_back(Ct2Variable::scalar_i8("encoder/embeddings_merge", 0));
    v.push_back(Ct2Variable::scalar_i8("encoder/multi_query_attention", 0));
  } else {
    for (const char* flag : {"alibi", "alibi_use_positive_positions", "scale_alibi", "start_from_zero_embedding"})
      v.push_back(Ct2Variable::scalar_i8("decoder/" + std::string(flag), 0));
    v.push_back(Ct2Variable::scalar_i16("decoder/alignment_heads", 1));
    v.push_back(Ct2Variable::scalar_i16("decoder/alignment_layer", -1));
  }
}

std::vector<Ct2Variable> variables(const nn::ModelConfig& c, Weights& w) {
  std::vector<Ct2Variable> v;
  SpecBuilder b(w, v);
  const std::string src_emb = c.shared_vocab ? "embeddings.shared.weight" : "embeddings.src.weight";
  const std::string tgt_emb = c.shared_vocab ? "embeddings.shared.weight" : "embeddings.tgt.weight";
  b.copy("encoder/embeddings_0/weight", src_emb);
  b.copy("decoder/embeddings/weight", tgt_emb);
  b.copy("decoder/projection/weight", tgt_emb);
  if (c.output_bias) {
    b.copy("decoder/projection/bias", "output.bias");
  } else {
    const std::vector<float> zeros(static_cast<size_t>(c.vocab_size_tgt), 0.0f);
    v.push_back(Ct2Variable::f32("decoder/projection/bias", {c.vocab_size_tgt}, zeros.data()));
  }
  for (const char* side : {"encoder", "decoder"}) {
    const std::string s = side;
    if (c.positions == nn::PositionKind::learned) {
      b.copy(s + "/position_encodings/encodings", "embeddings.positions.weight");
    } else {
      const std::vector<float> table = nn::sinusoidal_table(c.max_positions, c.d_model, c.sinusoidal_layout);
      v.push_back(Ct2Variable::f32(s + "/position_encodings/encodings", {c.max_positions, c.d_model}, table.data()));
    }
    if (c.norm == nn::NormPlacement::pre) b.norm(s + "/layer_norm", s + ".final_norm");
    side_flags(v, s, c);
  }
  for (int i = 0; i < c.n_layers_enc; ++i) {
    const std::string to = "encoder/layer_" + std::to_string(i), from = "encoder.layers." + std::to_string(i);
    b.attention(to + "/self_attention", from + ".self_attn", true);
    b.norm(to + "/self_attention/layer_norm", from + ".self_attn_norm");
    b.linear(to + "/ffn/linear_0", from + ".ffn.fc1");
    b.linear(to + "/ffn/linear_1", from + ".ffn.fc2");
    b.norm(to + "/ffn/layer_norm", from + ".ffn_norm");
  }
  for (int i = 0; i < c.n_layers_dec; ++i) {
    const std::string to = "decoder/layer_" + std::to_string(i), from = "decoder.layers." + std::to_string(i);
    b.attention(to + "/self_attention", from + ".self_attn", true);
    b.norm(to + "/self_attention/layer_norm", from + ".self_attn_norm");
    b.attention(to + "/attention", from + ".cross_attn", false);
    b.norm(to + "/attention/layer_norm", from + ".cross_attn_norm");
    b.linear(to + "/ffn/linear_0", from + ".ffn.fc1");
    b.linear(to + "/ffn/linear_1", from + ".ffn.fc2");
    b.norm(to + "/ffn/layer_norm", from + ".ffn_norm");
  }
  return v;
}

// A model trained on ids alone has no pieces: CTranslate2 still needs a token per id.
std::vector<std::string> named_ids(int size, const nn::ModelConfig& c) {
  std::vector<std::string> pieces(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i) pieces[static_cast<size_t>(i)] = std::string(1, 't').append(std::to_string(i));
  const std::pair<int32_t, const char*> specials[] = {
      {c.pad_id, "<pad>"}, {c.unk_id, "<unk>"}, {c.bos_id, "<s>"}, {c.eos_id, "</s>"}};
  for (const auto& [id, name] : specials)
    if (id >= 0 && id < size) pieces[static_cast<size_t>(id)] = name;
  return pieces;
}

std::vector<std::string> pieces_of(const Vocabulary& vocab) {
  std::vector<std::string> pieces;
  for (int i = 0; i < vocab.size(); ++i) pieces.push_back(vocab.id_to_piece(i));
  return pieces;
}

// Python's json.dump(list, indent=2): ASCII with \uXXXX escapes, no newline at the end.
void write_json(const std::string& path, const nlohmann::json& j, bool final_newline) {
  util::AtomicFile file(path, false);
  file.stream() << j.dump(2, ' ', true) << (final_newline ? "\n" : "");
  file.commit();
}

}  // namespace

Ct2ExportResult export_ct2(const std::string& model_dir, const std::string& out_dir, const Ct2ExportOptions& options) {
  nlohmann::json full;
  const nn::ModelConfig c = load_model_config(model_dir, &full);
  const std::string stored = stored_weight_type(full, (fs::path(model_dir) / config_file_name).string());
  if (stored != "float32")
    throw FormatError(model_dir + ": the weights are stored as " + stored + " (tt-convert quantize)",
                      "export the float32 model it was made from; CTranslate2 quantizes at load (compute_type)");
  Ct2ExportResult result;
  std::vector<std::string> source, target;
  if (full.contains("vocab")) {
    const ModelTokenizers spm = load_tokenizers(model_dir, full, c);
    source = pieces_of(spm.source);
    target = pieces_of(spm.target);
  } else {
    source = named_ids(c.vocab_size_src, c);
    target = named_ids(c.vocab_size_tgt, c);
    result.named_ids = true;
  }
  Weights weights((fs::path(model_dir) / weights_file_name).string());
  std::vector<Ct2Variable> vars = variables(c, weights);
  const auto piece = [&](int32_t id) { return target.at(static_cast<size_t>(id)); };
  nlohmann::json config = {{"add_source_bos", false},
                           {"add_source_eos", true},
                           {"bos_token", piece(c.bos_id)},
                           {"decoder_start_token", piece(c.bos_id)},
                           {"eos_token", piece(c.eos_id)},
                           {"layer_norm_epsilon", full["model"].value("layer_norm_eps", 1e-5)},
                           {"multi_query_attention", false},
                           {"unk_token", piece(c.unk_id)}};
  check_output_dir(out_dir, options.replace, {"model.bin"}, "a CTranslate2 model directory");

  util::AtomicDirectory dir(out_dir);
  const Ct2Written written = write_ct2_model_bin(dir.file("model.bin"), "TransformerSpec", 7, std::move(vars));
  write_json(dir.file("config.json"), config, true);
  result.files = {"model.bin", "config.json"};
  if (source == target) {
    write_json(dir.file("shared_vocabulary.json"), source, false);
    result.files.push_back("shared_vocabulary.json");
  } else {
    write_json(dir.file("source_vocabulary.json"), source, false);
    write_json(dir.file("target_vocabulary.json"), target, false);
    result.files.insert(result.files.end(), {"source_vocabulary.json", "target_vocabulary.json"});
  }
  dir.commit();
  result.variables = written.stored;
  result.aliases = written.aliases;
  return result;
}

}  // namespace tt::io
