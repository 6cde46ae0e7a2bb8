// Multi-head attention (§3.2): h heads of scaled dot-product attention, d_k = d_v = D / H.
//   x [B, Tq, D] queries; memory [B, Tk, D] keys/values (cross) — self-attention uses x for both.
//   Q, K, V stay in the projection's own layout ([B, T, H, Dh] rows) and the batched GEMMs read them through
//   strides: no transposing copies. scores/probs [B, H, Tq, Tk]; ctx [B, Tq, D] (heads concatenated).
// The mask is added before softmax (-inf: masked weights are exactly 0): key padding from key_lengths
// everywhere, and causal for decoder self-attention. Attention dropout (option) acts on the weights.
// Names: <prefix>.{q,k,v,out}_proj.{weight [D, D], bias [D]}; q/k/v weights are declared adjacent (then the
// biases) so that self-attention projects Q, K and V with one [3D, D] GEMM and cross-attention K, V with one.
// Dropout place: 0 (attention weights).
#pragma once

#include <string>

#include "nn/decode_state.h"
#include "nn/linear.h"
#include "nn/step_context.h"
#include "ops/attention_composed.h"
#include "ops/kept_bf16.h"

namespace tt::nn {

class MultiHeadAttention {
 public:
  enum class Kind { self, cross };

  struct Saved {
    tensor::Tensor x, memory;         // inputs (memory: cross only)
    tensor::Tensor qkv;               // self: Q|K|V projections; cross: Q only (undefined: see q16)
    tensor::Tensor kv;                // cross: K|V projections of memory (undefined: see q16)
    tensor::Tensor probs, dropped;    // [B, H, Tq, Tk]; dropped = after attention dropout (p > 0 only; bf16
                                      // where q16 is defined)
    tensor::Tensor ctx;               // [B, Tq, D]; bf16 where q16 is defined
    tensor::Tensor key_lengths;       // [B] i32 or undefined
    backend::DropoutKey key;
    float p = 0;
    int B = 0, Tq = 0, Tk = 0;
    bool causal = false;
    // bf16 storage (Backend::bf16_storage): q, k, v alone, rounded, dense [B, H, Tq or Tk, Dh].
    tensor::Tensor q16, k16, v16;
    // Kept in bf16 training for backward's products (released there): x, memory, ctx, and q, k, v, weights.
    ops::KeptBf16 x_kept, memory_kept, ctx_kept;
    ops::AttentionKept kept;
  };

  void declare(ParameterSet& params, const std::string& prefix, int D, int H, Kind kind, float attention_dropout,
               uint32_t site);
  void bind(const ParameterSet& params);

  // out [B, Tq, D]. memory: cross only (undefined for self). key_lengths [B] i32 (undefined: no padding).
  // capture [B, H, Tq, Tk] (undefined: none) receives the weights.
  // fused: out is the output before out_proj's bias, which the caller's fused residual kernel adds (output()).
  void forward(const tensor::Tensor& out, const tensor::Tensor& x, const tensor::Tensor& memory,
               const tensor::Tensor& key_lengths, bool causal, const StepContext& ctx, Saved* saved,
               const tensor::Tensor& capture = {}, bool fused = false) const;
  // dx assigned (fused: accumulated, and out_proj's bias gradient left to the caller); dmemory (cross only)
  // ACCUMULATED, since every decoder layer reads the same memory.
  void backward(const tensor::Tensor& dx, const tensor::Tensor& dmemory, const tensor::Tensor& dout,
                const Saved& saved, tensor::Arena& scratch, bool fused = false) const;
  const Linear& output() const { return out_; }

  // ---- incremental decoding (inference, no dropout) ----
  // Self-attention for new positions of every row: x [queries, 1, D], time-major (the rows of the first new
  // position, then of the next); writes query i's K, V to row keys.first_row + i of cache.self_k / self_v
  // (nn/decode_state.h), then each query attends over the cache rows keys.self_rows [queries, keys]
  // (keys.self_counts [queries]; ops::attention_decode).
  void forward_step(const tensor::Tensor& out, const tensor::Tensor& x, const LayerCache& cache, const StepKeys& keys,
                    tensor::Arena& arena, const tensor::Tensor& capture = {}) const;
  // Cross-attention: K and V of the encoder memory [B, S, D], computed once per sentence batch.
  void project_memory(const tensor::Tensor& k, const tensor::Tensor& v, const tensor::Tensor& memory) const;
  // Cross-attention for the step's queries x [queries, 1, D]: cache.cross_k, cross_v [B, S, D] addressed
  // through keys.cross_rows [queries, S] (sentence * S + j) and keys.cross_counts [queries] (source lengths).
  void forward_cross_step(const tensor::Tensor& out, const tensor::Tensor& x, const LayerCache& cache,
                          const StepKeys& keys, tensor::Arena& arena, const tensor::Tensor& capture = {}) const;

 private:
  int D_ = 0, H_ = 0;
  Kind kind_ = Kind::self;
  float attention_dropout_ = 0;
  uint32_t site_ = 0;
  Linear q_, k_, v_, out_;
  LinearGroup qkv_;  // self: q, k, v
  LinearGroup kv_;   // cross: k, v
};

}  // namespace tt::nn
