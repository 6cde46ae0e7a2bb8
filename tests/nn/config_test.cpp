// ModelConfig: presets, validation messages, JSON round trip and errors, parameter count (against the
// model's own registry).
#include <catch2/catch.hpp>
#include <climits>
#include <cmath>
#include <nlohmann/json.hpp>

#include "nn/config.h"
#include "nn/transformer.h"
#include "util/error.h"

using tt::nn::ModelConfig;

namespace {

ModelConfig with_vocab(ModelConfig c, int v) {
  c.vocab_size_src = c.vocab_size_tgt = v;
  return c;
}

// The validation message for `c`, or "" if it is valid.
std::string problem(const ModelConfig& c) {
  try {
    c.validate();
  } catch (const tt::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("presets follow the paper's Table 3 and the small/tiny sizes", "[config]") {
  auto base = tt::nn::preset("base");
  CHECK(base.n_layers_enc == 6);
  CHECK(base.n_layers_dec == 6);
  CHECK(base.d_model == 512);
  CHECK(base.d_ff == 2048);
  CHECK(base.heads == 8);
  CHECK(base.dropout == Approx(0.1f));
  CHECK(base.label_smoothing == Approx(0.1f));
  auto big = tt::nn::preset("big");
  CHECK((big.n_layers_enc == 6 && big.d_model == 1024 && big.d_ff == 4096 && big.heads == 16));
  CHECK(big.dropout == Approx(0.3f));
  auto small = tt::nn::preset("small");
  CHECK((small.n_layers_enc == 3 && small.n_layers_dec == 3 && small.d_model == 256 && small.d_ff == 1024 &&
         small.heads == 4));
  CHECK(small.dropout == Approx(0.1f));
  auto tiny = tt::nn::preset("tiny");
  CHECK((tiny.n_layers_enc == 4 && tiny.d_model == 128 && tiny.d_ff == 256 && tiny.heads == 4));
  CHECK(tiny.dropout == Approx(0.3f));
  CHECK(tiny.head_dim() == 32);
  CHECK_THROWS_WITH(tt::nn::preset("huge"), Catch::Contains("huge") && Catch::Contains("tiny"));
}

TEST_CASE("parameter count: base ~63M and big ~213M with a shared 37000 vocabulary", "[config]") {
  // Exact figure by hand: 37000*512 + 6*(4*(512^2+512) + 2*1024 + (512*2048+2048+2048*512+512))
  //                                 + 6*(8*(512^2+512) + 3*1024 + ...same FFN)
  CHECK(with_vocab(tt::nn::preset("base"), 37000).parameter_count() == 63082496);
  const auto big = with_vocab(tt::nn::preset("big"), 37000).parameter_count();
  CHECK(big > 212'000'000);
  CHECK(big < 215'000'000);

  auto c = with_vocab(tt::nn::preset("tiny"), 1000);
  const auto shared = c.parameter_count();
  c.shared_vocab = false;
  c.vocab_size_src = 1200;
  CHECK(c.parameter_count() == shared + 1200 * 128);  // a second embedding matrix, output still tied
  c.positions = tt::nn::PositionKind::learned;
  CHECK(c.parameter_count() == shared + 1200 * 128 + 1024 * 128);
  c.norm = tt::nn::NormPlacement::pre;
  CHECK(c.parameter_count() == shared + 1200 * 128 + 1024 * 128 + 2 * 2 * 128);
}

TEST_CASE("parameter_count equals the model's registry for every variant", "[config]") {
  for (bool shared : {true, false})
    for (auto positions : {tt::nn::PositionKind::sinusoidal, tt::nn::PositionKind::learned})
      for (auto norm : {tt::nn::NormPlacement::post, tt::nn::NormPlacement::pre}) {
        ModelConfig c = with_vocab(tt::nn::preset("tiny"), 97);
        c.output_bias = shared != (norm == tt::nn::NormPlacement::pre);  // with and without, in every variant kind
        c.shared_vocab = shared;
        if (!shared) c.vocab_size_tgt = 61;
        c.positions = positions;
        c.norm = norm;
        c.n_layers_dec = 3;
        c.max_positions = 40;
        int64_t sum = 0;
        for (const auto& [name, shape] : tt::nn::Transformer::parameter_shapes(c)) sum += shape.numel();
        INFO("shared " << shared << " learned " << (positions == tt::nn::PositionKind::learned) << " pre "
                       << (norm == tt::nn::NormPlacement::pre));
        CHECK(sum == c.parameter_count());
      }
  auto base = with_vocab(tt::nn::preset("base"), 37000);
  int64_t sum = 0;
  for (const auto& [name, shape] : tt::nn::Transformer::parameter_shapes(base)) sum += shape.numel();
  CHECK(sum == base.parameter_count());
}

TEST_CASE("validate names the field and the rule", "[config]") {
  ModelConfig ok = with_vocab(tt::nn::preset("base"), 8000);
  CHECK(problem(ok).empty());

  ModelConfig c = ok;
  c.d_model = 500;
  CHECK_THAT(problem(c), Catch::Contains("d_model (500)") && Catch::Contains("divisible by heads (8)"));
  c = ok;
  c.n_layers_enc = 0;
  CHECK_THAT(problem(c), Catch::Contains("n_layers_enc"));
  c = ok;
  c.n_layers_dec = 0;
  CHECK_THAT(problem(c), Catch::Contains("n_layers_dec"));
  c = ok;
  c.dropout = -0.1f;
  CHECK_THAT(problem(c), Catch::Contains("dropout (-0.1)"));
  c = ok;
  c.attention_dropout = 1.0f;
  CHECK_THAT(problem(c), Catch::Contains("attention_dropout"));
  c = ok;
  c.relu_dropout = 2.0f;
  CHECK_THAT(problem(c), Catch::Contains("relu_dropout"));
  c = ok;
  c.label_smoothing = 1.0f;
  CHECK_THAT(problem(c), Catch::Contains("label_smoothing"));
  c = with_vocab(ok, 4);
  CHECK_THAT(problem(c), Catch::Contains("vocab_size_src (4)") && Catch::Contains("at least 5"));
  c = with_vocab(ok, 0);
  CHECK_THAT(problem(c), Catch::Contains("vocab_size"));
  c = ok;
  c.vocab_size_tgt = 9000;  // shared vocabulary with two sizes
  CHECK_THAT(problem(c), Catch::Contains("shared_vocab"));
  c.shared_vocab = false;
  CHECK(problem(c).empty());
  c = ok;
  c.heads = 0;
  CHECK_THAT(problem(c), Catch::Contains("heads"));
  c = ok;
  c.d_ff = 0;
  CHECK_THAT(problem(c), Catch::Contains("d_ff"));
  c = ok;
  c.max_positions = 0;
  CHECK_THAT(problem(c), Catch::Contains("max_positions"));
  c = ok;
  c.eos_id = c.bos_id;
  CHECK_THAT(problem(c), Catch::Contains("eos_id") && Catch::Contains("bos_id"));
  c = ok;
  c.bos_id = c.pad_id;  // the decoder may start from pad (Marian)
  CHECK(problem(c).empty());
  c.unk_id = c.pad_id;
  CHECK_THAT(problem(c), Catch::Contains("unk_id") && Catch::Contains("pad_id"));
  c = ok;
  c.heads = 1;
  c.d_model = 33;
  CHECK(problem(c).empty());
  c.sinusoidal_layout = tt::nn::SinusoidalLayout::halves;
  CHECK_THAT(problem(c), Catch::Contains("sinusoidal_layout") && Catch::Contains("even d_model (33)"));
}

TEST_CASE("the fields imported models need: defaults are the paper's, each round-trips and is checked",
          "[config]") {
  const ModelConfig paper;
  CHECK(paper.activation == tt::nn::Activation::relu);
  CHECK(paper.scale_embeddings);
  CHECK(!paper.output_bias);
  CHECK(paper.sinusoidal_layout == tt::nn::SinusoidalLayout::interleaved);
  // A config.json written before these fields existed loads as the paper's model.
  const ModelConfig old = tt::nn::config_from_json(nlohmann::json{{"d_model", 64}});
  CHECK(tt::nn::to_json(old)["activation"] == "relu");
  CHECK(tt::nn::to_json(old)["sinusoidal_layout"] == "interleaved");

  ModelConfig c = with_vocab(tt::nn::preset("tiny"), 300);
  c.activation = tt::nn::Activation::swish;
  c.scale_embeddings = false;
  c.output_bias = true;
  c.sinusoidal_layout = tt::nn::SinusoidalLayout::halves;
  c.bos_id = c.pad_id;
  const nlohmann::json j = tt::nn::to_json(c);
  CHECK(j["activation"] == "swish");
  CHECK(j["scale_embeddings"] == false);
  CHECK(j["output_bias"] == true);
  CHECK(j["sinusoidal_layout"] == "halves");
  const ModelConfig r = tt::nn::config_from_json(nlohmann::json::parse(j.dump()));
  CHECK(tt::nn::to_json(r) == j);
  CHECK(r.parameter_count() == c.parameter_count());
  CHECK(c.parameter_count() == with_vocab(tt::nn::preset("tiny"), 300).parameter_count() + 300);  // the bias
  c.activation = tt::nn::Activation::gelu;
  CHECK(tt::nn::config_from_json(tt::nn::to_json(c)).activation == tt::nn::Activation::gelu);

  CHECK_THROWS_WITH(tt::nn::config_from_json(nlohmann::json{{"activation", "tanh"}}),
                    Catch::Contains("'activation'") && Catch::Contains("swish"));
  CHECK_THROWS_WITH(tt::nn::config_from_json(nlohmann::json{{"sinusoidal_layout", "mixed"}}),
                    Catch::Contains("'sinusoidal_layout'") && Catch::Contains("halves"));
  CHECK_THROWS_WITH(tt::nn::config_from_json(nlohmann::json{{"output_bias", 1}}), Catch::Contains("'output_bias'"));
  CHECK_THROWS_WITH(tt::nn::config_from_json(nlohmann::json{{"scale_embeddings", "yes"}}),
                    Catch::Contains("'scale_embeddings'"));
}

TEST_CASE("JSON round trip keeps every field", "[config]") {
  ModelConfig c = with_vocab(tt::nn::preset("tiny"), 1234);
  c.shared_vocab = false;
  c.vocab_size_tgt = 777;
  c.n_layers_dec = 2;
  c.attention_dropout = 0.05f;
  c.relu_dropout = 0.15f;
  c.label_smoothing = 0.2f;
  c.layer_norm_eps = 1e-6f;
  c.positions = tt::nn::PositionKind::learned;
  c.norm = tt::nn::NormPlacement::pre;
  c.max_positions = 300;
  const nlohmann::json j = tt::nn::to_json(c);
  CHECK(j["positions"] == "learned");
  CHECK(j["norm"] == "pre");
  ModelConfig r = tt::nn::config_from_json(nlohmann::json::parse(j.dump()));
  CHECK(tt::nn::to_json(r) == j);
  CHECK(r.vocab_size_tgt == 777);
  CHECK(r.layer_norm_eps == 1e-6f);
  CHECK(r.parameter_count() == c.parameter_count());
}

TEST_CASE("config_from_json overrides only the given keys and rejects unknown keys and wrong types", "[config]") {
  ModelConfig base = tt::nn::preset("small");
  ModelConfig r = tt::nn::config_from_json(nlohmann::json{{"d_model", 128}, {"dropout", 0}}, base);
  CHECK(r.d_model == 128);
  CHECK(r.dropout == 0.0f);
  CHECK(r.d_ff == 1024);  // from the base
  CHECK(r.n_layers_enc == 3);

  CHECK_THROWS_WITH(tt::nn::config_from_json(nlohmann::json{{"d_modle", 128}}), Catch::Contains("'d_modle'"));
  CHECK_THROWS_AS(tt::nn::config_from_json(nlohmann::json{{"d_modle", 128}}), tt::ConfigError);
  CHECK_THROWS_WITH(tt::nn::config_from_json(nlohmann::json{{"heads", "8"}}),
                    Catch::Contains("'heads'") && Catch::Contains("integer"));
  CHECK_THROWS_WITH(tt::nn::config_from_json(nlohmann::json{{"heads", 8.5}}), Catch::Contains("'heads'"));
  CHECK_THROWS_WITH(tt::nn::config_from_json(nlohmann::json{{"dropout", "0.1"}}),
                    Catch::Contains("'dropout'") && Catch::Contains("number"));
  CHECK_THROWS_WITH(tt::nn::config_from_json(nlohmann::json{{"shared_vocab", 1}}), Catch::Contains("'shared_vocab'"));
  CHECK_THROWS_WITH(tt::nn::config_from_json(nlohmann::json{{"positions", "rotary"}}),
                    Catch::Contains("'positions'") && Catch::Contains("sinusoidal"));
  CHECK_THROWS_WITH(tt::nn::config_from_json(nlohmann::json{{"norm", "middle"}}), Catch::Contains("'norm'"));
  CHECK_THROWS_AS(tt::nn::config_from_json(nlohmann::json::array()), tt::ConfigError);
}

TEST_CASE("sizes are bounded, so counts cannot overflow, and the biggest valid config counts exactly", "[config]") {
  ModelConfig ok = with_vocab(tt::nn::preset("base"), 8000);
  ModelConfig c = ok;
  c.d_model = 1'000'000'000;  // used to print a negative parameter count
  c.heads = 1;
  CHECK_THAT(problem(c), Catch::Contains("d_model (1000000000) must be at most 65536"));
  c = ok;
  c.d_ff = (1 << 20) + 1;
  CHECK_THAT(problem(c), Catch::Contains("d_ff (1048577)"));
  c = ok;
  c.n_layers_dec = 1001;
  CHECK_THAT(problem(c), Catch::Contains("n_layers_dec (1001) must be at most 1000"));
  c = with_vocab(ok, (1 << 24) + 1);
  CHECK_THAT(problem(c), Catch::Contains("vocab_size_src"));
  c = ok;
  c.max_positions = INT32_MAX;
  CHECK_THAT(problem(c), Catch::Contains("max_positions"));

  // Every limit at once: the count is computed in 64 bits, by hand:
  //   V*D + P*D + L*(4(D^2+D) + 4D + 2DF + F + D) + L*(8(D^2+D) + 6D + 2DF + F + D) + 4D
  ModelConfig big = with_vocab(ok, tt::nn::ModelLimits::max_vocab);
  big.d_model = tt::nn::ModelLimits::max_d_model;
  big.heads = 1;
  big.d_ff = tt::nn::ModelLimits::max_d_ff;
  big.n_layers_enc = big.n_layers_dec = tt::nn::ModelLimits::max_layers;
  big.max_positions = tt::nn::ModelLimits::max_positions;
  big.positions = tt::nn::PositionKind::learned;
  big.norm = tt::nn::NormPlacement::pre;
  CHECK(problem(big).empty());
  const int64_t D = 65536, F = 1 << 20, L = 1000, V = 1 << 24, P = 1 << 20;
  const int64_t ffn = 2 * D * F + F + D;
  const int64_t expected = V * D + P * D + L * (4 * (D * D + D) + 4 * D + ffn) + L * (8 * (D * D + D) + 6 * D + ffn) + 4 * D;
  CHECK(big.parameter_count() == expected);
  CHECK(big.parameter_count() > 0);
  CHECK(big.training_state_bytes() == 16 * expected);
}

TEST_CASE("a model too big for memory is refused before allocating, with the estimate", "[config]") {
  ModelConfig base = with_vocab(tt::nn::preset("base"), 37000);  // 63,082,496 parameters: 1.0 GB of state
  CHECK(base.training_state_bytes() == 16 * int64_t{63082496});
  CHECK_NOTHROW(base.check_fits_memory(int64_t{2} << 30));
  CHECK_NOTHROW(base.check_fits_memory(0));  // unknown memory: no check
  CHECK_THROWS_AS(base.check_fits_memory(int64_t{512} << 20), tt::ConfigError);
  CHECK_THROWS_WITH(base.check_fits_memory(int64_t{512} << 20),
                    Catch::Contains("about 1.0 GB") && Catch::Contains("0.0631 G parameters") &&
                        Catch::Contains("536.9 MB"));
  CHECK(tt::nn::format_bytes(999) == "999 B");
  CHECK(tt::nn::format_bytes(1'500'000'000'000) == "1.5 TB");
  CHECK(tt::nn::physical_memory_bytes() > 0);
}

TEST_CASE("non-finite or out-of-float-range numbers in config JSON are refused naming the key", "[config]") {
  CHECK_THROWS_WITH(tt::nn::config_from_json(nlohmann::json::parse(R"({"layer_norm_eps": 1e39})")),
                    Catch::Contains("'layer_norm_eps'") && Catch::Contains("finite"));
  CHECK_THROWS_AS(tt::nn::config_from_json(nlohmann::json::parse(R"({"dropout": -1e300})")), tt::ConfigError);
  CHECK_THROWS_WITH(tt::nn::config_from_json(nlohmann::json{{"label_smoothing", std::nan("")}}),
                    Catch::Contains("'label_smoothing'"));
  CHECK_THROWS_WITH(tt::nn::config_from_json(nlohmann::json{{"relu_dropout", INFINITY}}),
                    Catch::Contains("'relu_dropout'"));
  // validate() catches values set in code, too.
  ModelConfig c = with_vocab(tt::nn::preset("tiny"), 100);
  c.layer_norm_eps = INFINITY;
  CHECK_THAT(problem(c), Catch::Contains("layer_norm_eps (inf) must be a finite number"));
  c = with_vocab(tt::nn::preset("tiny"), 100);
  c.dropout = NAN;
  CHECK_THAT(problem(c), Catch::Contains("dropout"));
}
