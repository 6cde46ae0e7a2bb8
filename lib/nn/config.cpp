#include "nn/config.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "util/error.h"

namespace tt::nn {

namespace {

std::string fmt(float x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

void require(bool ok, const std::string& message) {
  if (!ok) throw ConfigError("invalid model config: " + message);
}

void require_finite(float x, const char* field) {
  require(std::isfinite(x), std::string(field) + " (" + fmt(x) + ") must be a finite number");
}

void require_at_most(int64_t value, int64_t limit, const char* field) {
  require(value <= limit, std::string(field) + " (" + std::to_string(value) + ") must be at most " +
                              std::to_string(limit));
}

void require_probability(float p, const char* field) {
  // 1.0 would drop everything (and divide by zero in the 1/(1-p) scaling); NaN fails both tests.
  require(p >= 0.0f && p < 1.0f, std::string(field) + " (" + fmt(p) + ") must be in [0, 1)");
}

// A float as the double with the same shortest decimal form, so 0.1f is written "0.1", not
// 0.10000000149011612 (config.json is read by people).
double json_float(float x) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::strtod(std::string(buf, r.ptr).c_str(), nullptr);
}

const char* position_name(PositionKind k) { return k == PositionKind::sinusoidal ? "sinusoidal" : "learned"; }
const char* norm_name(NormPlacement n) { return n == NormPlacement::post ? "post" : "pre"; }
const char* layout_name(SinusoidalLayout l) { return l == SinusoidalLayout::interleaved ? "interleaved" : "halves"; }

}  // namespace

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::relu: return "relu";
    case Activation::swish: return "swish";
    case Activation::gelu: return "gelu";
  }
  return "?";
}

void ModelConfig::validate() const {
  require(vocab_size_src >= 5, "vocab_size_src (" + std::to_string(vocab_size_src) +
                                   ") must be at least 5 (ids 0-3 are pad, unk, bos, eos); set the vocabulary size");
  require(vocab_size_tgt >= 5, "vocab_size_tgt (" + std::to_string(vocab_size_tgt) +
                                   ") must be at least 5 (ids 0-3 are pad, unk, bos, eos); set the vocabulary size");
  require(!shared_vocab || vocab_size_src == vocab_size_tgt,
          "shared_vocab needs vocab_size_src (" + std::to_string(vocab_size_src) + ") == vocab_size_tgt (" +
              std::to_string(vocab_size_tgt) + "); set shared_vocab to false for separate vocabularies");
  require_at_most(vocab_size_src, ModelLimits::max_vocab, "vocab_size_src");
  require_at_most(vocab_size_tgt, ModelLimits::max_vocab, "vocab_size_tgt");
  require(d_model > 0, "d_model (" + std::to_string(d_model) + ") must be positive");
  require_at_most(d_model, ModelLimits::max_d_model, "d_model");
  require(heads > 0, "heads (" + std::to_string(heads) + ") must be positive");
  require(d_model % heads == 0, "d_model (" + std::to_string(d_model) + ") must be divisible by heads (" +
                                    std::to_string(heads) + ")");
  require(d_ff > 0, "d_ff (" + std::to_string(d_ff) + ") must be positive");
  require_at_most(d_ff, ModelLimits::max_d_ff, "d_ff");
  require(n_layers_enc > 0, "n_layers_enc (" + std::to_string(n_layers_enc) + ") must be at least 1");
  require(n_layers_dec > 0, "n_layers_dec (" + std::to_string(n_layers_dec) + ") must be at least 1");
  require_at_most(n_layers_enc, ModelLimits::max_layers, "n_layers_enc");
  require_at_most(n_layers_dec, ModelLimits::max_layers, "n_layers_dec");
  for (auto [x, field] : {std::pair{dropout, "dropout"}, std::pair{attention_dropout, "attention_dropout"},
                          std::pair{relu_dropout, "relu_dropout"}, std::pair{label_smoothing, "label_smoothing"},
                          std::pair{layer_norm_eps, "layer_norm_eps"}})
    require_finite(x, field);
  require_probability(dropout, "dropout");
  require_probability(attention_dropout, "attention_dropout");
  require_probability(relu_dropout, "relu_dropout");
  require_probability(label_smoothing, "label_smoothing");
  require(layer_norm_eps > 0.0f, "layer_norm_eps (" + fmt(layer_norm_eps) + ") must be positive");
  require(max_positions > 0, "max_positions (" + std::to_string(max_positions) + ") must be positive");
  require_at_most(max_positions, ModelLimits::max_positions, "max_positions");
  const int vocab = std::min(vocab_size_src, vocab_size_tgt);
  const std::pair<const char*, int32_t> ids[] = {{"pad_id", pad_id}, {"unk_id", unk_id}, {"bos_id", bos_id},
                                                  {"eos_id", eos_id}};
  for (size_t i = 0; i < 4; ++i) {
    require(ids[i].second >= 0 && ids[i].second < vocab, std::string(ids[i].first) + " (" +
                                                             std::to_string(ids[i].second) +
                                                             ") must be a valid id below the vocabulary size");
    for (size_t j = 0; j < i; ++j)
      require(ids[i].second != ids[j].second || (i == 2 && j == 0),  // bos may be pad (see config.h)
              std::string(ids[i].first) + " and " + ids[j].first + " must differ");
  }
  require(sinusoidal_layout == SinusoidalLayout::interleaved || d_model % 2 == 0,
          "sinusoidal_layout \"halves\" needs an even d_model (" + std::to_string(d_model) + ")");
}

int64_t ModelConfig::parameter_count() const {
  const int64_t D = d_model, F = d_ff, L_enc = n_layers_enc, L_dec = n_layers_dec;
  const int64_t V_src = vocab_size_src, V_tgt = vocab_size_tgt;
  const int64_t embeddings = shared_vocab ? V_src * D : (V_src + V_tgt) * D;
  const int64_t positions = this->positions == PositionKind::learned ? int64_t{max_positions} * D : 0;
  const int64_t projection = D * D + D;
  const int64_t layer_norm = 2 * D;
  const int64_t ffn = D * F + F + F * D + D;
  const int64_t encoder_layer = 4 * projection + 2 * layer_norm + ffn;
  const int64_t decoder_layer = 8 * projection + 3 * layer_norm + ffn;
  const int64_t final_norms = norm == NormPlacement::pre ? 2 * layer_norm : 0;  // one per stack
  // The output projection is tied to the (target) embedding; its bias is optional.
  const int64_t logits_bias = output_bias ? V_tgt : 0;
  return embeddings + positions + L_enc * encoder_layer + L_dec * decoder_layer + final_norms + logits_bias;
}

int64_t ModelConfig::training_state_bytes() const { return 16 * parameter_count(); }

void ModelConfig::check_fits_memory(int64_t available_bytes) const {
  const int64_t needed = training_state_bytes();
  if (available_bytes <= 0 || needed <= available_bytes) return;
  std::ostringstream params;
  params.precision(3);
  params << static_cast<double>(parameter_count()) / 1e9;
  throw ConfigError("model too large: training needs about " + format_bytes(needed) +
                        " for weights, gradients and Adam state (16 bytes x " + params.str() +
                        " G parameters), more than the " + format_bytes(available_bytes) + " of memory here",
                    "make the model smaller (d_model, d_ff, layers, vocabulary size)");
}

int64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? int64_t{pages} * page : 0;
}

std::string format_bytes(int64_t bytes) {
  static const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  double x = static_cast<double>(bytes);
  size_t u = 0;
  while (x >= 1000.0 && u + 1 < std::size(units)) {
    x /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", x, units[u]);
  return buf;
}

ModelConfig preset(const std::string& name) {
  ModelConfig c;
  auto set = [&c](int layers, int d, int ff, int h, float dropout) {
    c.n_layers_enc = c.n_layers_dec = layers;
    c.d_model = d;
    c.d_ff = ff;
    c.heads = h;
    c.dropout = dropout;
  };
  if (name == "base") set(6, 512, 2048, 8, 0.1f);
  else if (name == "big") set(6, 1024, 4096, 16, 0.3f);
  else if (name == "small") set(3, 256, 1024, 4, 0.1f);
  else if (name == "tiny") set(4, 128, 256, 4, 0.3f);
  else throw ConfigError("unknown preset '" + name + "'; valid presets: base, big, small, tiny");
  return c;
}

nlohmann::json to_json(const ModelConfig& c) {
  return nlohmann::json{
      {"vocab_size_src", c.vocab_size_src},
      {"vocab_size_tgt", c.vocab_size_tgt},
      {"shared_vocab", c.shared_vocab},
      {"d_model", c.d_model},
      {"d_ff", c.d_ff},
      {"heads", c.heads},
      {"n_layers_enc", c.n_layers_enc},
      {"n_layers_dec", c.n_layers_dec},
      {"dropout", json_float(c.dropout)},
      {"attention_dropout", json_float(c.attention_dropout)},
      {"relu_dropout", json_float(c.relu_dropout)},
      {"label_smoothing", json_float(c.label_smoothing)},
      {"layer_norm_eps", json_float(c.layer_norm_eps)},
      {"positions", position_name(c.positions)},
      {"max_positions", c.max_positions},
      {"norm", norm_name(c.norm)},
      {"sinusoidal_layout", layout_name(c.sinusoidal_layout)},
      {"activation", activation_name(c.activation)},
      {"scale_embeddings", c.scale_embeddings},
      {"output_bias", c.output_bias},
      {"pad_id", c.pad_id},
      {"unk_id", c.unk_id},
      {"bos_id", c.bos_id},
      {"eos_id", c.eos_id},
  };
}

ModelConfig config_from_json(const nlohmann::json& j, ModelConfig base) {
  if (!j.is_object()) throw ConfigError("model config must be a JSON object, got " + std::string(j.type_name()));
  ModelConfig& c = base;
  using Setter = std::function<void(const std::string&, const nlohmann::json&)>;
  auto wrong_type = [](const std::string& key, const char* expected, const nlohmann::json& v) {
    return ConfigError("model config key '" + key + "' must be " + expected + ", got " + v.type_name() + " " +
                       v.dump());
  };
  auto integer = [&](int& field) -> Setter {
    return [&field, wrong_type](const std::string& key, const nlohmann::json& v) {
      if (!v.is_number_integer()) throw wrong_type(key, "an integer", v);
      const auto x = v.get<int64_t>();
      if (x < INT32_MIN || x > INT32_MAX) throw wrong_type(key, "a 32-bit integer", v);
      field = static_cast<int>(x);
    };
  };
  auto number = [&](float& field) -> Setter {
    return [&field, wrong_type](const std::string& key, const nlohmann::json& v) {
      if (!v.is_number()) throw wrong_type(key, "a number", v);
      // 1e39 is a valid JSON number but not a float: it would become inf, be saved as null and
      // then refused on reload.
      const double x = v.get<double>();
      if (!std::isfinite(x) || std::fabs(x) > std::numeric_limits<float>::max()) {
        throw wrong_type(key, "a finite number within the 32-bit float range", v);
      }
      field = static_cast<float>(x);
    };
  };
  auto boolean = [&](bool& field) -> Setter {
    return [&field, wrong_type](const std::string& key, const nlohmann::json& v) {
      if (!v.is_boolean()) throw wrong_type(key, "true or false", v);
      field = v.get<bool>();
    };
  };
  const std::map<std::string, Setter> setters = {
      {"vocab_size_src", integer(c.vocab_size_src)},
      {"vocab_size_tgt", integer(c.vocab_size_tgt)},
      {"shared_vocab", boolean(c.shared_vocab)},
      {"d_model", integer(c.d_model)},
      {"d_ff", integer(c.d_ff)},
      {"heads", integer(c.heads)},
      {"n_layers_enc", integer(c.n_layers_enc)},
      {"n_layers_dec", integer(c.n_layers_dec)},
      {"dropout", number(c.dropout)},
      {"attention_dropout", number(c.attention_dropout)},
      {"relu_dropout", number(c.relu_dropout)},
      {"label_smoothing", number(c.label_smoothing)},
      {"layer_norm_eps", number(c.layer_norm_eps)},
      {"positions",
       [&](const std::string& key, const nlohmann::json& v) {
         if (v == "sinusoidal") c.positions = PositionKind::sinusoidal;
         else if (v == "learned") c.positions = PositionKind::learned;
         else throw wrong_type(key, "\"sinusoidal\" or \"learned\"", v);
       }},
      {"max_positions", integer(c.max_positions)},
      {"norm",
       [&](const std::string& key, const nlohmann::json& v) {
         if (v == "post") c.norm = NormPlacement::post;
         else if (v == "pre") c.norm = NormPlacement::pre;
         else throw wrong_type(key, "\"post\" or \"pre\"", v);
       }},
      {"sinusoidal_layout",
       [&](const std::string& key, const nlohmann::json& v) {
         if (v == "interleaved") c.sinusoidal_layout = SinusoidalLayout::interleaved;
         else if (v == "halves") c.sinusoidal_layout = SinusoidalLayout::halves;
         else throw wrong_type(key, "\"interleaved\" or \"halves\"", v);
       }},
      {"activation",
       [&](const std::string& key, const nlohmann::json& v) {
         if (v == "relu") c.activation = Activation::relu;
         else if (v == "swish") c.activation = Activation::swish;
         else if (v == "gelu") c.activation = Activation::gelu;
         else throw wrong_type(key, "\"relu\", \"swish\" or \"gelu\"", v);
       }},
      {"scale_embeddings", boolean(c.scale_embeddings)},
      {"output_bias", boolean(c.output_bias)},
      {"pad_id", integer(c.pad_id)},
      {"unk_id", integer(c.unk_id)},
      {"bos_id", integer(c.bos_id)},
      {"eos_id", integer(c.eos_id)},
  };
  for (const auto& [key, value] : j.items()) {
    auto it = setters.find(key);
    if (it == setters.end()) {
      std::string valid;
      for (const auto& s : setters) valid += (valid.empty() ? "" : ", ") + s.first;
      throw ConfigError("unknown model config key '" + key + "'", "valid keys: " + valid);
    }
    it->second(key, value);
  }
  return c;
}

}  // namespace tt::nn
