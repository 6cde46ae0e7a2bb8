// The maps tt-attnviz prints, checked on a trained model: rows are distributions, masked entries are
// exactly 0, one teacher-forced pass gives the weights the search saw step by step, capture changes no
// logit, and batching (padding) changes no map.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "decode/search.h"
#include "decode/trained_fixture.h"
#include "io/model_dir.h"
#include "viz/attention_maps.h"

using namespace tt;

namespace {

struct Loaded {
  std::unique_ptr<backend::Backend> backend = backend::make_backend("cpu", 1);
  std::unique_ptr<nn::Transformer> model;
  std::optional<data::SpmTokenizer> spm;
  Loaded() {
    const auto& f = test::trained_fixture();
    backend->set_row_invariant(true);
    model = std::make_unique<nn::Transformer>(io::load_model_config(f.model_dir), *backend, nn::Usage::inference);
    io::load_model_weights(f.model_dir, model->params());
    spm = data::SpmTokenizer::load(f.model_dir + "/spm.model");
  }
  std::vector<int32_t> source(size_t line) const {
    auto v = spm->encode_ids(test::trained_fixture().lines[line]);
    std::vector<int32_t> ids(v.begin(), v.end());
    ids.push_back(model->config().eos_id);
    return ids;
  }
};

Loaded& loaded() {
  static Loaded l;
  return l;
}

}  // namespace

TEST_CASE("attention maps: rows sum to 1, future positions exactly 0, shapes cropped", "[viz]") {
  auto& l = loaded();
  tensor::Arena arena(*l.backend);
  std::vector<std::vector<int32_t>> sources = {l.source(0), l.source(3), l.source(5)}, targets;
  decode::SearchOptions so;
  for (const auto& h : decode::search(*l.model, sources, so)) targets.push_back(h.front().tokens);
  const auto maps = viz::capture_attention(*l.model, arena, sources, targets);
  REQUIRE(maps.size() == 3);
  REQUIRE(sources[0].size() != sources[1].size());  // the batch is padded
  for (size_t i = 0; i < maps.size(); ++i) {
    const viz::SentenceAttention& a = maps[i];
    CHECK(a.S() == static_cast<int>(sources[i].size()));
    CHECK(a.T() == static_cast<int>(targets[i].size()) + 1);
    CHECK(a.target.front() == l.model->config().bos_id);
    for (viz::Kind k : viz::all_kinds) {
      INFO(viz::kind_name(k) << " sentence " << i);
      REQUIRE(a.maps(k).size() == static_cast<size_t>(a.layers(k)) * a.heads * a.rows(k) * a.cols(k));
      for (int layer = 0; layer < a.layers(k); ++layer)
        for (int h = 0; h < a.heads; ++h)
          for (int r = 0; r < a.rows(k); ++r) {
            const float* row = a.maps(k).data() + a.offset(k, layer, h) + static_cast<size_t>(r) * a.cols(k);
            double sum = 0;
            for (int c = 0; c < a.cols(k); ++c) {
              sum += row[c];
              if (k == viz::Kind::decoder_self && c > r) CHECK(row[c] == 0.0f);  // the future: exactly 0
              CHECK(row[c] >= 0.0f);
            }
            CHECK(std::abs(sum - 1.0) <= 1e-5);
          }
    }
  }
}

TEST_CASE("attention maps: padding gets exactly 0, and a batch gives each sentence's own maps", "[viz]") {
  auto& l = loaded();
  tensor::Arena arena(*l.backend);
  const std::vector<std::vector<int32_t>> sources = {l.source(0), l.source(2)};
  const std::vector<std::vector<int32_t>> targets = {{10, 11, 12, 13, 14}, {20}};
  const auto batch = viz::capture_attention(*l.model, arena, sources, targets);
  for (size_t i = 0; i < 2; ++i) {
    const auto single = viz::capture_attention(*l.model, arena, {sources[i]}, {targets[i]}).front();
    for (viz::Kind k : viz::all_kinds) {
      REQUIRE(single.maps(k).size() == batch[i].maps(k).size());
      for (size_t j = 0; j < single.maps(k).size(); ++j) REQUIRE(single.maps(k)[j] == Approx(batch[i].maps(k)[j]).margin(1e-6));
    }
  }
  // The raw capture: padded keys (source columns past a sentence's length, target columns past its length)
  // get exactly 0 in every real query row.
  const nn::ModelConfig& c = l.model->config();
  nn::Batch b;
  b.B = 2;
  b.S = static_cast<int>(std::max(sources[0].size(), sources[1].size()));
  b.T = 6;
  b.pad_id = c.pad_id;
  b.src.assign(static_cast<size_t>(b.B * b.S), c.pad_id);
  b.tgt_in.assign(static_cast<size_t>(b.B * b.T), c.pad_id);
  b.tgt_out = b.tgt_in;
  for (int i = 0; i < 2; ++i) {
    std::copy(sources[i].begin(), sources[i].end(), b.src.begin() + i * b.S);
    b.tgt_in[static_cast<size_t>(i * b.T)] = c.bos_id;
    std::copy(targets[i].begin(), targets[i].end(), b.tgt_in.begin() + i * b.T + 1);
    b.src_lengths.push_back(static_cast<int32_t>(sources[i].size()));
    b.tgt_lengths.push_back(static_cast<int32_t>(targets[i].size()) + 1);
  }
  tensor::ArenaScope scope(arena);
  nn::AttentionCapture cap;
  const int H = c.heads;
  cap.encoder.push_back(arena.allocate(tensor::Shape{b.B, H, b.S, b.S}));
  cap.decoder_self.push_back(arena.allocate(tensor::Shape{b.B, H, b.T, b.T}));
  cap.decoder_cross.push_back(arena.allocate(tensor::Shape{b.B, H, b.T, b.S}));
  l.model->forward_logits(b, arena, &cap);
  const auto enc = cap.encoder[0].to_host_f32(), dec = cap.decoder_self[0].to_host_f32(),
             cross = cap.decoder_cross[0].to_host_f32();
  int padded = 0;
  for (int i = 0; i < 2; ++i)
    for (int h = 0; h < H; ++h) {
      for (int r = 0; r < b.src_lengths[i]; ++r)
        for (int k = b.src_lengths[i]; k < b.S; ++k, ++padded)
          CHECK(enc[((static_cast<size_t>(i) * H + h) * b.S + r) * b.S + k] == 0.0f);
      for (int r = 0; r < b.tgt_lengths[i]; ++r) {
        for (int k = b.src_lengths[i]; k < b.S; ++k, ++padded)
          CHECK(cross[((static_cast<size_t>(i) * H + h) * b.T + r) * b.S + k] == 0.0f);
        for (int k = b.tgt_lengths[i]; k < b.T; ++k, ++padded)
          CHECK(dec[((static_cast<size_t>(i) * H + h) * b.T + r) * b.T + k] == 0.0f);
      }
    }
  CHECK(padded > 0);
}

TEST_CASE("attention maps: the teacher-forced pass gives the weights the search saw step by step", "[viz]") {
  auto& l = loaded();
  nn::Transformer& m = *l.model;
  const nn::ModelConfig& c = m.config();
  const std::vector<int32_t> src = l.source(1);
  decode::SearchOptions so;
  const std::vector<int32_t> y = decode::search(m, {src}, so).front().front().tokens;
  REQUIRE(!y.empty());
  tensor::Arena arena(*l.backend), encode_arena(*l.backend), cache(*l.backend), step(*l.backend);
  const auto full = viz::capture_attention(m, arena, {src}, {y}).front();
  const int S = static_cast<int>(src.size()), T = static_cast<int>(y.size()) + 1, H = c.heads;

  nn::AttentionCapture enc;
  for (int layer = 0; layer < c.n_layers_enc; ++layer) enc.encoder.push_back(encode_arena.allocate(tensor::Shape{1, H, S, S}));
  nn::EncoderOutput encoded = m.encode(src, {S}, 1, S, encode_arena, &enc);
  for (int layer = 0; layer < c.n_layers_enc; ++layer) {
    const auto e = enc.encoder[static_cast<size_t>(layer)].to_host_f32();
    for (size_t j = 0; j < e.size(); ++j)
      REQUIRE(e[j] == Approx(full.encoder_self[full.offset(viz::Kind::encoder_self, layer, 0) + j]).margin(1e-5));
  }
  nn::DecodeState state = m.start_decoding(encoded, 1, T, cache);
  std::vector<int32_t> inputs = {c.bos_id};
  inputs.insert(inputs.end(), y.begin(), y.end());
  for (int t = 0; t < T; ++t) {
    tensor::ArenaScope scope(step);
    nn::AttentionCapture cap;
    for (int layer = 0; layer < c.n_layers_dec; ++layer) {
      cap.decoder_self.push_back(step.allocate(tensor::Shape{1, H, 1, t + 1}));
      cap.decoder_cross.push_back(step.allocate(tensor::Shape{1, H, 1, S}));
    }
    m.decode_step(state, {inputs[static_cast<size_t>(t)]}, step, true, &cap);
    for (int layer = 0; layer < c.n_layers_dec; ++layer) {
      const auto self = cap.decoder_self[static_cast<size_t>(layer)].to_host_f32();
      const auto cross = cap.decoder_cross[static_cast<size_t>(layer)].to_host_f32();
      for (int h = 0; h < H; ++h) {
        const float* fs = full.decoder_self.data() + full.offset(viz::Kind::decoder_self, layer, h) + static_cast<size_t>(t) * T;
        const float* fc = full.cross.data() + full.offset(viz::Kind::cross, layer, h) + static_cast<size_t>(t) * S;
        for (int k = 0; k <= t; ++k) REQUIRE(self[static_cast<size_t>(h * (t + 1) + k)] == Approx(fs[k]).margin(1e-5));
        for (int k = 0; k < S; ++k) REQUIRE(cross[static_cast<size_t>(h * S + k)] == Approx(fc[k]).margin(1e-5));
      }
    }
  }
}

TEST_CASE("attention maps: capture on or off changes no logit byte", "[viz]") {
  auto& l = loaded();
  const nn::ModelConfig& c = l.model->config();
  nn::Batch b;
  b.B = 1;
  const auto src = l.source(4);
  b.S = static_cast<int>(src.size());
  b.T = 4;
  b.src = src;
  b.src_lengths = {b.S};
  b.tgt_in = {c.bos_id, 10, 11, 12};
  b.tgt_out = {10, 11, 12, c.eos_id};
  b.tgt_lengths = {4};
  b.pad_id = c.pad_id;
  tensor::Arena arena(*l.backend);
  const auto plain = l.model->forward_logits(b, arena).to_host_f32();
  arena.reset();
  nn::AttentionCapture cap;
  for (int layer = 0; layer < c.n_layers_enc; ++layer)
    cap.encoder.push_back(arena.allocate(tensor::Shape{1, c.heads, b.S, b.S}));
  for (int layer = 0; layer < c.n_layers_dec; ++layer) {
    cap.decoder_self.push_back(arena.allocate(tensor::Shape{1, c.heads, b.T, b.T}));
    cap.decoder_cross.push_back(arena.allocate(tensor::Shape{1, c.heads, b.T, b.S}));
  }
  const auto captured = l.model->forward_logits(b, arena, &cap).to_host_f32();
  REQUIRE(plain.size() == captured.size());
  CHECK(std::memcmp(plain.data(), captured.data(), plain.size() * sizeof(float)) == 0);
}
