#include "ops/embedding.h"

#include "util/check.h"
#include "util/error.h"

namespace tt::ops {

tensor::Tensor upload_ids(tensor::Arena& arena, const std::vector<int32_t>& ids, tensor::Shape shape, int vocab_size,
                          const std::string& what) {
  if (static_cast<int64_t>(ids.size()) != shape.numel())
    throw Error(what + " ids: expected " + std::to_string(shape.numel()) + " values for shape " + shape.str() +
                ", got " + std::to_string(ids.size()));
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab_size) {
      int64_t cols = shape.rank() >= 2 ? shape[shape.rank() - 1] : static_cast<int64_t>(ids.size());
      throw Error(what + " token id " + std::to_string(ids[i]) + " (sentence " + std::to_string(i / cols) +
                      ", position " + std::to_string(i % cols) + ") is outside the vocabulary of size " +
                      std::to_string(vocab_size),
                  "the data was encoded with a different vocabulary than the model's; re-tokenise it with the "
                  "model's SentencePiece model");
    }
  }
  tensor::Tensor t = arena.allocate(shape, tensor::DType::i32);
  if (!ids.empty()) t.backend().copy_from_host(t.i32(), ids.data(), t.bytes());
  return t;
}

void embedding_forward(const tensor::Tensor& y, const tensor::Tensor& ids, const tensor::Tensor& table,
                       const tensor::Tensor& positions, float scale, int position_offset) {
  TT_CHECK(ids.shape().rank() == 2 && table.shape().rank() == 2);
  const int B = static_cast<int>(ids.dim(0)), T = static_cast<int>(ids.dim(1)), D = static_cast<int>(table.dim(1));
  TT_CHECK_MSG(y.numel() == int64_t{B} * T * D, "embedding: y " + y.shape().str() + ", ids " + ids.shape().str());
  if (positions.defined()) {
    if (position_offset + T > positions.dim(0))
      throw Error("sequence of " + std::to_string(position_offset + T) + " positions exceeds the model's " +
                      std::to_string(positions.dim(0)) + " positions",
                  "use shorter sentences (filter the data by length) or a model with a larger max_positions");
    TT_CHECK(positions.dim(1) == D);
  }
  y.backend().embedding_forward(y.f32(), ids.i32(), table.f32(), positions.defined() ? positions.f32() : nullptr,
                                scale, B, T, D, position_offset);
}

void embedding_backward(const tensor::Tensor& dtable, const tensor::Tensor& dy, const tensor::Tensor& ids,
                        float scale) {
  const int D = static_cast<int>(dtable.dim(1));
  TT_CHECK(dy.numel() == ids.numel() * D);
  dy.backend().embedding_backward(dtable.f32(), dy.f32(), ids.i32(), scale, ids.numel(), D);
}

void positions_backward(const tensor::Tensor& dpositions, const tensor::Tensor& dy) {
  TT_CHECK(dy.shape().rank() == 3);
  const int B = static_cast<int>(dy.dim(0)), T = static_cast<int>(dy.dim(1)), D = static_cast<int>(dy.dim(2));
  TT_CHECK(dpositions.dim(1) == D && dpositions.dim(0) >= T);
  dy.backend().positions_backward(dpositions.f32(), dy.f32(), B, T, D);
}

}  // namespace tt::ops
