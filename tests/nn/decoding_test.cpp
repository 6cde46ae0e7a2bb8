// Incremental decoding with the KV cache gives the logits of the full forward pass; beam reordering keeps
// them; attention capture changes nothing.
#include <catch2/catch.hpp>

#include <algorithm>

#include "backend/backend.h"
#include "nn/transformer.h"
#include "support/grad_check.h"
#include "util/error.h"

using namespace tt;
using tensor::Shape;
using tensor::Tensor;

namespace {

nn::ModelConfig decode_config(nn::NormPlacement norm, nn::PositionKind positions) {
  nn::ModelConfig c;
  c.vocab_size_src = c.vocab_size_tgt = 23;
  c.d_model = 16;
  c.heads = 4;
  c.d_ff = 24;
  c.n_layers_enc = 2;
  c.n_layers_dec = 3;
  c.norm = norm;
  c.positions = positions;
  c.max_positions = 20;
  return c;
}

// B sentences: src with the given lengths, target of T full tokens (bos first).
nn::Batch make_batch(int B, int S, int T, const std::vector<int32_t>& src_lengths, uint64_t seed) {
  auto r = test::random_values(size_t(B) * (S + T), seed, 4.0f, 22.99f);
  nn::Batch b;
  b.B = B;
  b.S = S;
  b.T = T;
  b.src.assign(size_t(B) * S, 0);
  b.tgt_in.assign(size_t(B) * T, 0);
  b.tgt_out.assign(size_t(B) * T, 3);
  for (int i = 0; i < B; ++i) {
    for (int s = 0; s < src_lengths[i]; ++s) b.src[size_t(i) * S + s] = int(r[size_t(i) * (S + T) + s]);
    b.tgt_in[size_t(i) * T] = 2;
    for (int t = 1; t < T; ++t) b.tgt_in[size_t(i) * T + t] = int(r[size_t(i) * (S + T) + S + t]);
  }
  b.src_lengths = src_lengths;
  b.tgt_lengths.assign(B, T);
  return b;
}

void check_close(const std::vector<float>& a, size_t a0, const std::vector<float>& b, size_t b0, int n) {
  for (int v = 0; v < n; ++v) CHECK(a[a0 + v] == Approx(b[b0 + v]).margin(1e-5));
}

}  // namespace

TEST_CASE("incremental decoding with the KV cache equals the full forward pass", "[nn][decoding]") {
  auto be = backend::make_backend("cpu", 1);
  for (auto norm : {nn::NormPlacement::post, nn::NormPlacement::pre}) {
    for (auto positions : {nn::PositionKind::sinusoidal, nn::PositionKind::learned}) {
      auto c = decode_config(norm, positions);
      nn::Transformer model(c, *be);
      model.init_parameters(5);
      const int B = 3, S = 6, T = 7, V = c.vocab_size_tgt;
      nn::Batch batch = make_batch(B, S, T, {6, 2, 4}, 8);
      tensor::Arena arena(*be), cache_arena(*be), step_arena(*be);
      const auto full = model.forward_logits(batch, arena).to_host_f32();  // [B, T, V]

      auto encoded = model.encode(batch.src, batch.src_lengths, B, S, arena);
      auto state = model.start_decoding(encoded, B, T, cache_arena);
      for (int t = 0; t < T; ++t) {
        tensor::ArenaScope scope(step_arena);
        std::vector<int32_t> tokens;
        for (int b = 0; b < B; ++b) tokens.push_back(batch.tgt_in[size_t(b) * T + t]);
        auto step = model.decode_step(state, tokens, step_arena).to_host_f32();  // [B, V]
        for (int b = 0; b < B; ++b) check_close(step, size_t(b) * V, full, (size_t(b) * T + t) * V, V);
      }
      CHECK(state.length() == T);
    }
  }
}

TEST_CASE("reorder: hypotheses continue from the rows they were copied from", "[nn][decoding]") {
  auto be = backend::make_backend("cpu", 1);
  auto c = decode_config(nn::NormPlacement::post, nn::PositionKind::sinusoidal);
  nn::Transformer model(c, *be);
  model.init_parameters(6);
  const int B = 2, S = 5, T = 7, V = c.vocab_size_tgt;
  nn::Batch batch = make_batch(B, S, T, {5, 3}, 9);
  // After 3 steps, rows become {1, 0, 1, 1}: the expected logits are those of the full pass on sentences
  // {1, 0, 1, 1}, provided the later tokens are fed accordingly.
  const std::vector<int32_t> index{1, 0, 1, 1};
  nn::Batch expanded = make_batch(4, S, T, {3, 5, 3, 3}, 1);
  for (int i = 0; i < 4; ++i) {
    for (int s = 0; s < S; ++s) expanded.src[size_t(i) * S + s] = batch.src[size_t(index[i]) * S + s];
    for (int t = 0; t < T; ++t) {
      // rows 2 and 3 diverge from row 0 after the reorder (different later tokens), as beams do
      int32_t tok = batch.tgt_in[size_t(index[i]) * T + t];
      if (t >= 3 && i >= 2) tok = 4 + (tok + i) % 19;
      expanded.tgt_in[size_t(i) * T + t] = tok;
    }
  }
  tensor::Arena arena(*be), cache_arena(*be), step_arena(*be);
  const auto full = model.forward_logits(expanded, arena).to_host_f32();
  auto encoded = model.encode(batch.src, batch.src_lengths, B, S, arena);
  auto state = model.start_decoding(encoded, 4, T, cache_arena);
  // A second reorder at t = 5 keeps rows {3, 1} (row 3 came from row 1 before): ancestries two deep.
  std::vector<int32_t> row_of{0, 1, 2, 3};  // current row -> row of `expanded`
  for (int t = 0; t < T; ++t) {
    tensor::ArenaScope scope(step_arena);
    if (t == 3) model.reorder(state, index);
    if (t == 5) {
      model.reorder(state, {3, 1});
      row_of = {3, 1};
    }
    std::vector<int32_t> tokens;
    for (int r = 0; r < state.rows(); ++r)
      tokens.push_back(t < 3 ? batch.tgt_in[size_t(r) * T + t] : expanded.tgt_in[size_t(row_of[r]) * T + t]);
    auto step = model.decode_step(state, tokens, step_arena, /*log_probs=*/false).to_host_f32();
    if (t >= 3)
      for (int r = 0; r < state.rows(); ++r)
        check_close(step, size_t(r) * V, full, (size_t(row_of[r]) * T + t) * V, V);
  }
}

TEST_CASE("log-probabilities and attention capture from decode_step", "[nn][decoding]") {
  auto be = backend::make_backend("cpu", 1);
  auto c = decode_config(nn::NormPlacement::pre, nn::PositionKind::sinusoidal);
  nn::Transformer model(c, *be);
  model.init_parameters(7);
  const int B = 2, S = 4, V = c.vocab_size_tgt, H = c.heads;
  nn::Batch batch = make_batch(B, S, 2, {4, 2}, 3);
  tensor::Arena arena(*be), cache_arena(*be), step_arena(*be);
  auto encoded = model.encode(batch.src, batch.src_lengths, B, S, arena);
  auto state = model.start_decoding(encoded, B, 4, cache_arena);
  auto plain = model.decode_step(state, {2, 2}, step_arena).to_host_f32();

  auto state2 = model.start_decoding(encoded, B, 4, cache_arena);
  nn::AttentionCapture capture;
  for (int l = 0; l < c.n_layers_dec; ++l) {
    capture.decoder_self.push_back(Tensor::empty(*be, Shape{B, H, 1, 1}));
    capture.decoder_cross.push_back(Tensor::empty(*be, Shape{B, H, 1, S}));
  }
  auto logp = model.decode_step(state2, {2, 2}, step_arena, true, &capture).to_host_f32();
  for (int b = 0; b < B; ++b) {
    double z = 0, max = -1e30;
    for (int v = 0; v < V; ++v) max = std::max(max, double(plain[size_t(b) * V + v]));
    for (int v = 0; v < V; ++v) z += std::exp(plain[size_t(b) * V + v] - max);
    for (int v = 0; v < V; ++v)
      CHECK(logp[size_t(b) * V + v] == Approx(plain[size_t(b) * V + v] - max - std::log(z)).margin(1e-5));
  }
  auto cross = capture.decoder_cross[1].to_host_f32();  // [B, H, 1, S]
  for (int h = 0; h < H; ++h) {
    CHECK(cross[size_t(1) * H * S + size_t(h) * S + 2] == 0.0f);  // sentence 1 has 2 source tokens
    CHECK(cross[size_t(1) * H * S + size_t(h) * S + 3] == 0.0f);
    CHECK(cross[size_t(h) * S + 3] > 0.0f);
  }
  for (float w : capture.decoder_self[0].to_host_f32()) CHECK(w == 1.0f);  // one position: all weight on it
}

TEST_CASE("attention capture in the full forward pass does not change the logits", "[nn][decoding]") {
  auto be = backend::make_backend("cpu", 1);
  auto c = decode_config(nn::NormPlacement::post, nn::PositionKind::learned);
  nn::Transformer model(c, *be);
  model.init_parameters(2);
  const int B = 2, S = 5, T = 4, H = c.heads;
  nn::Batch batch = make_batch(B, S, T, {5, 3}, 4);
  tensor::Arena arena(*be);
  auto plain = model.forward_logits(batch, arena).to_host_f32();
  nn::AttentionCapture capture;
  for (int l = 0; l < c.n_layers_enc; ++l) capture.encoder.push_back(Tensor::empty(*be, Shape{B, H, S, S}));
  for (int l = 0; l < c.n_layers_dec; ++l) {
    capture.decoder_self.push_back(Tensor::empty(*be, Shape{B, H, T, T}));
    capture.decoder_cross.push_back(Tensor::empty(*be, Shape{B, H, T, S}));
  }
  auto captured = model.forward_logits(batch, arena, &capture).to_host_f32();
  CHECK(captured == plain);
  auto enc = capture.encoder[0].to_host_f32();
  for (int q = 0; q < S; ++q) {
    double sum = 0;
    for (int k = 0; k < S; ++k) sum += enc[size_t(1) * H * S * S + size_t(q) * S + k];
    CHECK(sum == Approx(1.0).margin(1e-6));
    CHECK(enc[size_t(1) * H * S * S + size_t(q) * S + 4] == 0.0f);  // sentence 1: keys 3, 4 are padding
  }
}

TEST_CASE("reorder before the first step expands sentences into beams", "[nn][decoding]") {
  auto be = backend::make_backend("cpu", 1);
  auto c = decode_config(nn::NormPlacement::pre, nn::PositionKind::learned);
  nn::Transformer model(c, *be);
  model.init_parameters(8);
  const int B = 2, S = 4, T = 3, V = c.vocab_size_tgt;
  nn::Batch batch = make_batch(B, S, T, {4, 2}, 5);
  const std::vector<int32_t> index{0, 0, 1, 1};
  nn::Batch expanded = make_batch(4, S, T, {4, 4, 2, 2}, 6);
  for (int i = 0; i < 4; ++i)
    for (int s = 0; s < S; ++s) expanded.src[size_t(i) * S + s] = batch.src[size_t(index[i]) * S + s];
  tensor::Arena arena(*be), cache_arena(*be), step_arena(*be);
  const auto full = model.forward_logits(expanded, arena).to_host_f32();
  auto encoded = model.encode(batch.src, batch.src_lengths, B, S, arena);
  auto state = model.start_decoding(encoded, 4, T, cache_arena);
  model.reorder(state, index);
  REQUIRE(state.rows() == 4);
  for (int t = 0; t < T; ++t) {
    tensor::ArenaScope scope(step_arena);
    std::vector<int32_t> tokens;
    for (int r = 0; r < 4; ++r) tokens.push_back(expanded.tgt_in[size_t(r) * T + t]);
    auto step = model.decode_step(state, tokens, step_arena).to_host_f32();
    for (int r = 0; r < 4; ++r) check_close(step, size_t(r) * V, full, (size_t(r) * T + t) * V, V);
  }
  CHECK_THROWS_AS(model.decode_step(state, {2, 2, 2, 2}, step_arena), tt::Error);  // max_length reached
  CHECK_THROWS_AS(model.reorder(state, {0, 4}), tt::Error);                      // no row 4
}

TEST_CASE("decode_steps feeds several positions in one pass, bit for bit as one decode_step each", "[nn][decoding]") {
  auto be = backend::make_backend("cpu", 2);
  REQUIRE(be->set_row_invariant(true));  // the products' rows then do not depend on how many there are
  for (auto norm : {nn::NormPlacement::post, nn::NormPlacement::pre}) {
    for (auto positions : {nn::PositionKind::sinusoidal, nn::PositionKind::learned}) {
      auto c = decode_config(norm, positions);
      nn::Transformer model(c, *be);
      model.init_parameters(11);
      const int B = 3, S = 6, T = 9, V = c.vocab_size_tgt, heads = c.heads;
      nn::Batch batch = make_batch(B, S, T, {6, 2, 4}, 21);
      // max_rows B: each time slice of the cache is full (one block); B + 2: slices are written one by one.
      for (int max_rows : {B, B + 2}) {
        CAPTURE(max_rows);
        tensor::Arena arena(*be), cache_a(*be), cache_b(*be), step_arena(*be);
        auto encoded = model.encode(batch.src, batch.src_lengths, B, S, arena);
        auto one = model.start_decoding(encoded, max_rows, T, cache_a);
        auto many = model.start_decoding(encoded, max_rows, T, cache_b);
        // Rows reordered first (row 0 twice, row 2 dropped), so rows have histories of their own.
        const std::vector<int32_t> index{1, 0, 0};
        model.reorder(one, index);
        model.reorder(many, index);
        auto token = [&](int r, int t) { return batch.tgt_in[size_t(index[r]) * T + t]; };
        // Positions fed at once by `many`: 4, then 1, then 3 (T = 9 positions in all, one left for one).
        int t0 = 0;
        for (int n : {4, 1, 3, 1}) {
          std::vector<int32_t> tokens;
          for (int i = 0; i < n; ++i)
            for (int r = 0; r < B; ++r) tokens.push_back(token(r, t0 + i));
          tensor::ArenaScope scope(step_arena);
          nn::AttentionCapture capture_many;
          capture_many.decoder_cross.resize(size_t(c.n_layers_dec));
          capture_many.decoder_cross.back() = step_arena.allocate(Shape{n * B, heads, 1, S});
          const auto all = model.decode_steps(many, tokens, n, step_arena, true, &capture_many).to_host_f32();
          const auto all_attention = capture_many.decoder_cross.back().to_host_f32();
          for (int i = 0; i < n; ++i) {
            std::vector<int32_t> step_tokens;
            for (int r = 0; r < B; ++r) step_tokens.push_back(token(r, t0 + i));
            nn::AttentionCapture capture_one;
            capture_one.decoder_cross.resize(size_t(c.n_layers_dec));
            capture_one.decoder_cross.back() = step_arena.allocate(Shape{B, heads, 1, S});
            const auto step = model.decode_step(one, step_tokens, step_arena, true, &capture_one).to_host_f32();
            const auto step_attention = capture_one.decoder_cross.back().to_host_f32();
            // Time-major: position t0 + i of row r is row i * B + r of the pass.
            CHECK(std::equal(step.begin(), step.end(), all.begin() + std::ptrdiff_t(i) * B * V));
            CHECK(std::equal(step_attention.begin(), step_attention.end(),
                             all_attention.begin() + std::ptrdiff_t(i) * B * heads * S));
          }
          t0 += n;
        }
        CHECK(many.length() == T);
        CHECK_THROWS_AS(model.decode_steps(many, {2, 2, 2}, 1, step_arena), tt::Error);  // full
        auto fresh = model.start_decoding(encoded, max_rows, T, cache_a);
        CHECK_THROWS_AS(model.decode_steps(fresh, {2, 2}, 1, step_arena), tt::Error);  // 2 tokens for 3 rows
      }
    }
  }
}

TEST_CASE("a long batch is encoded in groups of sentences, bit for bit as each sentence alone", "[nn][decoding]") {
  for (auto norm : {nn::NormPlacement::post, nn::NormPlacement::pre}) {
    auto be = backend::make_backend("cpu", 2);
    REQUIRE(be->set_row_invariant(true));
    auto c = decode_config(norm, nn::PositionKind::sinusoidal);
    c.max_positions = 300;
    nn::Transformer model(c, *be, nn::Usage::inference);
    model.init_parameters(5);
    // 11 sentences of up to 250 positions: 2,750 padded positions, more than one group of 2,048.
    const int B = 11, S = 250, D = c.d_model;
    std::vector<int32_t> lengths(B), src(size_t(B) * S, c.pad_id);
    for (int b = 0; b < B; ++b) {
      lengths[size_t(b)] = b == 3 ? S : 20 + 17 * b;
      for (int s = 0; s < lengths[size_t(b)]; ++s) src[size_t(b) * S + s] = 4 + (b * 7 + s * 3) % 19;
    }
    tensor::Arena arena(*be), alone_arena(*be);
    const auto all = model.encode(src, lengths, B, S, arena).memory.to_host_f32();
    for (int b = 0; b < B; ++b) {
      const std::vector<int32_t> one(src.begin() + b * S, src.begin() + (b + 1) * S);
      const auto mine = model.encode(one, {lengths[size_t(b)]}, 1, S, alone_arena).memory.to_host_f32();
      alone_arena.reset();
      INFO("sentence " << b);
      CHECK(std::equal(mine.begin(), mine.end(), all.begin() + size_t(b) * S * D));
    }
  }
}
