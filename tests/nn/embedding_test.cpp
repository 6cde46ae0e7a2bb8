#include <catch2/catch.hpp>

#include <cmath>

#include "backend/backend.h"
#include "nn/embedding.h"
#include "nn/positional.h"
#include "ops/embedding.h"
#include "support/grad_check.h"
#include "util/error.h"

using namespace tt;
using tensor::Shape;
using tensor::Tensor;

namespace {

nn::ModelConfig small_config(bool shared, nn::PositionKind positions) {
  nn::ModelConfig c;
  c.vocab_size_src = 11;
  c.vocab_size_tgt = shared ? 11 : 13;
  c.shared_vocab = shared;
  c.d_model = 8;
  c.heads = 2;
  c.d_ff = 16;
  c.max_positions = 16;
  c.positions = positions;
  c.dropout = 0.25f;
  return c;
}

}  // namespace

TEST_CASE("embeddings: sqrt(d_model) * table row + sinusoidal position", "[nn][embedding]") {
  auto be = backend::make_backend("cpu", 1);
  auto c = small_config(true, nn::PositionKind::sinusoidal);
  nn::ParameterSet params;
  nn::Embeddings emb;
  emb.declare(params, c);
  params.allocate(*be);
  emb.bind(params, *be);
  test::randomize(params, 1);
  CHECK(params.all().size() == 1);
  CHECK(params[0].name == "embeddings.shared.weight");
  tensor::Arena arena(*be);
  Tensor ids = ops::upload_ids(arena, {3, 0, 10, 5, 5, 1}, Shape{2, 3}, 11, "source");
  Tensor y = Tensor::empty(*be, Shape{2, 3, 8});
  nn::StepContext ctx{arena, false, 0, 0};
  emb.forward(y, ids, nn::Side::target, 0, ctx, nullptr);
  auto table = params[0].value.to_host_f32();
  auto pe = nn::sinusoidal_table(16, 8);
  auto yv = y.to_host_f32();
  const int id[6] = {3, 0, 10, 5, 5, 1};
  for (int i = 0; i < 6; ++i)
    for (int d = 0; d < 8; ++d)
      CHECK(yv[i * 8 + d] == Approx(std::sqrt(8.0) * table[id[i] * 8 + d] + pe[(i % 3) * 8 + d]).margin(1e-5));
}

TEST_CASE("embeddings: an id outside the vocabulary is a clear error", "[nn][embedding]") {
  auto be = backend::make_backend("cpu", 1);
  tensor::Arena arena(*be);
  CHECK_THROWS_WITH(ops::upload_ids(arena, {1, 2, 40, 3}, Shape{2, 2}, 11, "source"),
                    Catch::Contains("source token id 40") && Catch::Contains("sentence 1, position 0") &&
                        Catch::Contains("vocabulary of size 11"));
  CHECK_THROWS_AS(ops::upload_ids(arena, {-1}, Shape{1, 1}, 11, "target"), Error);
}

namespace {

void check_embedding_gradients(bool shared, nn::PositionKind positions, bool dropout) {
  auto be = backend::make_backend("cpu", 1);
  auto c = small_config(shared, positions);
  nn::ParameterSet params;
  nn::Embeddings emb;
  emb.declare(params, c);
  params.allocate(*be);
  emb.bind(params, *be);
  test::randomize(params, 2);
  const int B = 2, T = 4, D = 8;
  tensor::Arena ids_arena(*be);
  // Repeated ids: their gradients add up.
  Tensor src = ops::upload_ids(ids_arena, {1, 2, 2, 7, 10, 1, 0, 0}, Shape{B, T}, 11, "source");
  Tensor tgt = ops::upload_ids(ids_arena, {4, 4, 9, 3, 2, 0, 6, 0}, Shape{B, T}, c.vocab_size_tgt, "target");
  const auto r1 = test::random_values(size_t(B) * T * D, 3), r2 = test::random_values(size_t(B) * T * D, 4);
  tensor::Arena arena(*be);
  auto forward = [&](nn::Embeddings::Saved* s1, nn::Embeddings::Saved* s2, Tensor* y1, Tensor* y2) {
    nn::StepContext ctx{arena, dropout, 11, 2};
    *y1 = arena.allocate(Shape{B, T, D});
    *y2 = arena.allocate(Shape{B, T, D});
    emb.forward(*y1, src, nn::Side::source, 0, ctx, s1);
    emb.forward(*y2, tgt, nn::Side::target, 0, ctx, s2);
  };
  auto loss = [&] {
    tensor::ArenaScope scope(arena);
    Tensor y1, y2;
    forward(nullptr, nullptr, &y1, &y2);
    return test::dot(y1.to_host_f32(), r1) + test::dot(y2.to_host_f32(), r2);
  };
  params.zero_grad();
  {
    tensor::ArenaScope scope(arena);
    nn::Embeddings::Saved s1, s2;
    Tensor y1, y2;
    forward(&s1, &s2, &y1, &y2);
    emb.backward(Tensor::from_host(*be, Shape{B, T, D}, r1), s1, nn::Side::source);
    emb.backward(Tensor::from_host(*be, Shape{B, T, D}, r2), s2, nn::Side::target);
  }
  // Every coordinate of the used rows, plus a sample of the rest (whose gradient must be 0).
  auto rp = test::check_gradient("params", params.values(), params.grads().to_host_f32(),
                                 test::sample_coords(params.flat_size(), 300, 5), loss);
  INFO(rp.report);
  CHECK(rp.ok());
}

}  // namespace

TEST_CASE("embedding gradients: shared vocabulary, sinusoidal positions", "[nn][embedding][grad]") {
  check_embedding_gradients(true, nn::PositionKind::sinusoidal, false);
}

TEST_CASE("embedding gradients: separate vocabularies, learned positions, dropout", "[nn][embedding][grad]") {
  check_embedding_gradients(false, nn::PositionKind::learned, false);
  check_embedding_gradients(false, nn::PositionKind::learned, true);
  check_embedding_gradients(true, nn::PositionKind::learned, true);
}
