// Token ids onto the device (validated), embedding lookup with scale + positions, and their backward.
//   ids [B, T] i32   table [V, D]   positions [max_positions, D]   y [B, T, D]
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/arena.h"
#include "tensor/tensor.h"

namespace tt::ops {

// Copies host ids into an arena tensor of `shape`, after checking every id is in [0, vocab_size): an id
// outside throws tt::Error naming the id, its position, `what` ("source", "target") and the vocabulary size.
tensor::Tensor upload_ids(tensor::Arena& arena, const std::vector<int32_t>& ids, tensor::Shape shape, int vocab_size,
                          const std::string& what);

// y[b, t, :] = scale · table[ids[b, t], :] + positions[position_offset + t, :] (positions may be undefined).
void embedding_forward(const tensor::Tensor& y, const tensor::Tensor& ids, const tensor::Tensor& table,
                       const tensor::Tensor& positions, float scale, int position_offset = 0);
// dtable[ids[i], :] += scale · dy[i, :] (accumulated).
void embedding_backward(const tensor::Tensor& dtable, const tensor::Tensor& dy, const tensor::Tensor& ids,
                        float scale);
// dpositions[t, :] += sum over b of dy[b, t, :] (accumulated), dy [B, T, D].
void positions_backward(const tensor::Tensor& dpositions, const tensor::Tensor& dy);

}  // namespace tt::ops
