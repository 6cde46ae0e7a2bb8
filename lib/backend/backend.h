// The kernel interface every device implements (CPU/oneDNN in backend/cpu, CUDA in backend/cuda).
//
// Raw pointers and ints, all storage row-major, all pointers live on this backend's device.
// Argument order everywhere: outputs, then saved state, then inputs, then sizes.
// Nothing here knows what a Transformer is; nothing in nn/ knows which backend runs it.
//
// Gradient convention (llm.c): parameter gradients are ACCUMULATED (+=), activation gradients are
// ASSIGNED (=). Kernels say which in their comment.
//
// What a new device must write: every method below marked "= 0" (memory, the products, the elementwise,
// norm, softmax, embedding, loss, optimizer, layout and decoding kernels). Everything else is optional,
// with defaults that mean "not here": the modes (row-invariant products, bf16 / int8 precision, stored
// weights), the bf16 copies of operands (hold / keep), bf16 activation storage (Bf16Storage), the fused
// kernels (fuses(): ops/ composes the primitives where a device does not fuse), and the swish / gelu
// activation of imported models (a device without it refuses such a model by name). A device is done when
// the conformance suite passes on it: add it to tests/conformance/backends_under_test.h, and every kernel
// case runs on it against the double-precision reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "backend/activation.h"
#include "backend/device.h"

namespace tt::backend {

// Identifies one dropout mask: the mask element i is a pure function of (seed, stream, i), so it is the
// same on any thread count and any device, and backward recomputes it instead of storing it.
// `stream` is derived by the caller from (step, layer, site) — see util/rng.h.
struct DropoutKey {
  uint64_t seed = 0;
  uint64_t stream = 0;
};

// Operand precision of the matrix products (gemm, gemm_batched). bf16: operands rounded to bfloat16,
// products accumulated and written in fp32 (mixed-precision training); everything else stays fp32.
// int8 (inference): the row-invariant products against constant weights (x W^T: linear layers, output
// projection) take int8 operands — weights per output row, activations per row, symmetric — with exact
// int32 sums and fp32 results; every other product stays fp32. In row-invariant mode (decoding) bf16 works
// the same way: only the products against weights take bf16 operands.
enum class MatmulPrecision { fp32, bf16, int8 };

struct StoredWeight;  // backend/quantized_weight.h
class Bf16Storage;   // backend/bf16_storage.h

// Strides (in elements) of a batched matrix operand with two batch dimensions [b1, b2, rows, cols]:
// element (i1, i2, r, c) is at i1*batch1 + i2*batch2 + r*ld + c. Lets attention run straight on the
// [B, T, H, Dh] projections without transposing copies.
struct MatrixStrides {
  int64_t batch1 = 0;
  int64_t batch2 = 0;
  int64_t ld = 0;
};

// The arguments of the fused attention kernels (Backend::attention_forward / attention_backward), written
// once: every device and instruction-set variant takes these, so a new argument is one field here.
// Operands are the projections as the Linear layers leave them: rows (b, t) at `ld` floats apart (row
// b * T + t), each row H heads of Dh columns (head h at columns h * Dh ...); q, ctx and their gradients
// have T = Tq rows per sentence, k, v and theirs T = Tk.
struct AttentionSizes {
  int B = 0, H = 0, Tq = 0, Tk = 0, Dh = 0;
};
struct HeadsIn {
  const float* data = nullptr;
  int64_t ld = 0;
};
struct HeadsOut {
  float* data = nullptr;
  int64_t ld = 0;
};
struct AttentionForwardArgs {
  AttentionSizes z;
  float scale = 1.0f;
  bool causal = false;
  float p = 0.0f;  // attention dropout
  DropoutKey key;
  HeadsOut ctx;                         // assigned
  float* probs = nullptr;               // [B, H, Tq, Tk], kept for backward
  uint8_t* flags = nullptr;             // p > 0: [B, H, Tq, Tk] dropout flags kept for backward, or null
  HeadsIn q, k, v;
  const int32_t* key_lengths = nullptr;  // [B], or null (no padding)
};
struct AttentionBackwardArgs {
  AttentionSizes z;
  float scale = 1.0f;
  float p = 0.0f;
  DropoutKey key;
  HeadsOut dq, dk, dv;          // assigned; they may share rows, never columns
  HeadsIn dctx;
  const float* probs = nullptr;  // as forward left them
  const uint8_t* flags = nullptr;  // as forward left them, or null: the flags are drawn again from `key`
  HeadsIn q, k, v;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  virtual std::string name() const = 0;  // "cpu (oneDNN, 2 threads)", "cuda:0 (NVIDIA H200)"

  // ---- memory --------------------------------------------------------------------------------------
  virtual void* allocate(size_t bytes) = 0;  // aligned to 64 bytes; throws tt::Error when out of memory
  virtual void deallocate(void* ptr, size_t bytes) noexcept = 0;
  // Memory that already reads as zeros, for buffers made once and kept (weights, gradients, optimizer
  // state), or nullptr where this backend has nothing cheaper than allocate() and zeroing (the caller then
  // zeroes). On the CPU: fresh pages from the OS, backed only once written. Freed by deallocate().
  virtual void* allocate_zeroed(size_t /*bytes*/) { return nullptr; }
  // The values in [ptr, ptr + bytes) of an allocation are no longer needed: the memory may go back to the
  // OS (it then reads as zeros, until written).
  virtual void discard(void* /*ptr*/, size_t /*bytes*/) {}
  virtual void copy_from_host(void* dst, const void* host_src, size_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* src, size_t bytes) = 0;
  virtual void copy(void* dst, const void* src, size_t bytes) = 0;  // device to device
  virtual void fill(float* x, float value, int64_t n) = 0;
  virtual void synchronize() = 0;

  // Row-invariant products (decoding): each output row of gemm / gemm_batched is a function of its own
  // input row alone — the same bits whatever the number of rows (M), the zero-weight padding of attention
  // keys, or the thread count — so a sentence translates the same in any batch. Costs some speed.
  // Returns whether the mode is now as requested (false: this backend cannot promise it).
  virtual bool set_row_invariant(bool on) { return !on; }

  // Matrix-product precision for every later gemm / gemm_batched call (bf16 and int8 in row-invariant
  // mode: only the products against weights change; int8 outside that mode: none).
  // Returns whether the mode is now as requested (false: this backend or processor cannot run it).
  virtual bool set_matmul_precision(MatmulPrecision p) { return p == MatmulPrecision::fp32; }
  virtual MatmulPrecision matmul_precision() const { return MatmulPrecision::fp32; }
  // What runs the products, for logs ("avx512_core_bf16", "avx512_core_amx"); empty if not known.
  virtual std::string matmul_isa() const { return ""; }
  // Whether int8 products (where set_matmul_precision(int8) is accepted) keep 8-bit weights. A CPU without
  // int8 dot-product instructions (VNNI, AMX) gets 7-bit weights, so that oneDNN's pairwise u8 x s8 sums
  // cannot saturate: less precise, and no faster than fp32 there (tt-translate --compute-type auto).
  virtual bool int8_keeps_8_bits() const { return true; }
  // A weight as its model file stores it (float32, or quantized by tt-convert quantize): a backend whose
  // products against this weight run in w->type (row-invariant mode at that precision) takes w and packs
  // from it instead of from the fp32 values at `slot` [w->N, w->K] (dense rows), which it then never reads,
  // so the caller need not write them. Returns false where it would not (another precision or device):
  // the caller writes w's (dequantized) values into the slot instead. Set the modes first.
  virtual bool adopt_stored_weight(const float* /*slot*/, std::shared_ptr<const StoredWeight> /*w*/) {
    return false;
  }
  // Decoding workers (row-invariant mode): from now on this backend's products against constant weights
  // read the packed copy `first` makes (and the stored weights it adopts), one copy for all workers, safe
  // to use from the workers' threads at once. Returns false where it would not (another device, a backend
  // that packs nothing): the caller adopts the stored weights for this one too. Call after the modes,
  // before any product or adoption here.
  virtual bool share_packed_weights(Backend& /*first*/) { return false; }
  // Products against a weight at `values` stop reusing what was packed from it (any shape): its values are
  // about to change, or its memory to hold another weight (a vocabulary shortlist's output rows, gathered
  // anew for every batch). Packed copies are otherwise recognised by address and a sample of values only.
  virtual void forget_packed(const float* /*values*/) {}
  // Weights mirrored in bf16 (no effect in fp32): converts values[0, n) once, and until release, any bf16
  // product operand lying inside that range is read from the copy instead of being converted again. The
  // caller must not change the values while the copy is held (the trainer holds it for one step's
  // forward and backward, then releases it before the optimizer updates the weights).
  virtual void hold_bf16_weights(const float* /*values*/, int64_t /*n*/) {}
  // The copy written by the optimizer instead (one pass over the weights instead of two): where this
  // backend would hold a bf16 copy of n weights, the buffer for it, which the optimizer fills as it updates
  // them (adam_step's param_bf16); null where it holds none. Not while weights are held.
  virtual uint16_t* bf16_weights_to_write(int64_t /*n*/) { return nullptr; }
  // As hold_bf16_weights, adopting the copy the caller wrote into bf16_weights_to_write's buffer after the
  // values' last change instead of converting them (the CPU backend checks a sample of it).
  virtual void hold_written_bf16_weights(const float* values, int64_t n) { hold_bf16_weights(values, n); }
  // Also forgets every kept operand (below).
  virtual void release_bf16_weights() {}
  // Operands used by more than one product (no effect unless bf16 weights are held, i.e. inside a training
  // step): after keep, a bf16 product operand lying inside values[0, n) is converted at its first use and
  // read from that copy by later products, until forget(values) has been called as often as keep. The
  // caller promises the values do not change meanwhile: a layer keeps what it saves for its backward
  // (a Linear's input, attention's q, k, v) and forgets it there, through ops::KeptBf16, which pairs them.
  // A range kept before the kernel that produces it may get its copy from that kernel, fused (the CPU
  // backend's elementwise kernels do: the FFN hidden layer and its gradient, LayerNorm outputs, attention
  // weights and their gradient, the loss gradient).
  virtual void keep_bf16_operand(const float* /*values*/, int64_t /*n*/) {}
  virtual void forget_bf16_operand(const float* /*values*/) {}

  // bf16 storage of activations (backend/bf16_storage.h): the backend's Bf16Storage inside a bf16 training
  // step where it has one, else null (a layer then keeps its activations in fp32).
  virtual Bf16Storage* bf16_storage() { return nullptr; }

  // ---- matrix products -------------------------------------------------------------------------------
  // C[M,N] = alpha * op(A) * op(B) + beta * C; op(A) is [M,K] (A stored [K,M] when trans_a), op(B) is
  // [K,N] (B stored [N,K] when trans_b). lda/ldb/ldc are row strides of the stored matrices.
  virtual void gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int64_t lda,
                    const float* B, int64_t ldb, float beta, float* C, int64_t ldc) = 0;
  // The same over a [batch1, batch2] grid of matrices (attention: batch1 = B, batch2 = H).
  virtual void gemm_batched(bool trans_a, bool trans_b, int batch1, int batch2, int M, int N, int K, float alpha,
                            const float* A, MatrixStrides a, const float* B, MatrixStrides b, float beta, float* C,
                            MatrixStrides c) = 0;

  // ---- elementwise and reductions --------------------------------------------------------------------
  // y = x + bias (bias broadcast over N rows of D). y may alias x.
  virtual void add_bias(float* y, const float* x, const float* bias, int64_t N, int D) = 0;
  // dbias[D] += sum over N rows of dy.
  virtual void bias_backward(float* dbias, const float* dy, int64_t N, int D) = 0;
  // y = a + b (n elements). y may alias a or b.
  virtual void add(float* y, const float* a, const float* b, int64_t n) = 0;
  // y += alpha * x
  virtual void axpy(float* y, float alpha, const float* x, int64_t n) = 0;
  // x *= alpha
  virtual void scale(float* x, float alpha, int64_t n) = 0;
  // Sum of squares of x (for gradient-norm clipping); result returned to the host.
  virtual double sum_squares(const float* x, int64_t n) = 0;

  // y = dropout(relu(x + bias)), keep probability 1-p, kept values scaled by 1/(1-p). y may alias x.
  virtual void bias_relu_dropout_forward(float* y, const float* x, const float* bias, int64_t N, int F, float p,
                                         DropoutKey key) = 0;
  // dx = dy where y > 0, scaled by 1/(1-p), else 0 (needs no mask: y == 0 iff dropped or relu-inactive).
  // dx may alias dy. Assigns dx; bias gradient is taken separately with bias_backward(dx).
  virtual void relu_dropout_backward(float* dx, const float* dy, const float* y, int64_t n, float p) = 0;

  // y = residual + dropout(x) (n elements). y may alias residual or x.
  virtual void dropout_add_forward(float* y, const float* residual, const float* x, int64_t n, float p,
                                   DropoutKey key) = 0;
  // y = dropout(x). y may alias x. p == 0 copies.
  virtual void dropout_forward(float* y, const float* x, int64_t n, float p, DropoutKey key) = 0;
  // dx = dropout mask(key) * dy / (1-p). dx may alias dy.
  virtual void dropout_backward(float* dx, const float* dy, int64_t n, float p, DropoutKey key) = 0;

  // ---- layer norm over the last dim --------------------------------------------------------------------
  // y = (x - mean) * rstd * gamma + beta; saves mean[N], rstd[N].
  virtual void layer_norm_forward(float* y, float* mean, float* rstd, const float* x, const float* gamma,
                                  const float* beta, int64_t N, int D, float eps) = 0;
  // dx = (assigned); dgamma, dbeta += (accumulated). dx may alias dy.
  virtual void layer_norm_backward(float* dx, float* dgamma, float* dbeta, const float* dy, const float* x,
                                   const float* mean, const float* rstd, const float* gamma, int64_t N, int D) = 0;

  // ---- attention softmax --------------------------------------------------------------------------------
  // In place over scores [B, H, Tq, Tk]: s = softmax(scale * s + mask) along Tk, where key k of batch b is
  // masked (-inf, weight exactly 0) when k >= key_lengths[b] (right padding), and, if causal, when
  // k > q + query_offset (query_offset = position of query 0, for incremental decoding with a KV cache).
  // key_lengths may be null (no padding). Every row keeps at least key 0, so rows always sum to 1.
  virtual void attention_softmax_forward(float* scores, const int32_t* key_lengths, int B, int H, int Tq, int Tk,
                                         float scale, bool causal, int query_offset) = 0;
  // In place: dscores = scale * p * (dp - sum_k(dp * p)), where `grad` holds dp on entry and dscores on exit.
  virtual void attention_softmax_backward(float* grad, const float* probs, int B, int H, int Tq, int Tk,
                                          float scale) = 0;

  // ---- embeddings ---------------------------------------------------------------------------------------
  // y[b, t, :] = scale * table[ids[b, t], :] + positions[position_offset + t, :] (positions may be null).
  // Ids outside [0, V) are a caller bug (validated in ops/).
  virtual void embedding_forward(float* y, const int32_t* ids, const float* table, const float* positions,
                                 float scale, int B, int T, int D, int position_offset) = 0;
  // dtable[ids[i], :] += scale * dy[i, :]  (accumulated; duplicate ids add up).
  virtual void embedding_backward(float* dtable, const float* dy, const int32_t* ids, float scale, int64_t N,
                                  int D) = 0;
  // dpositions[t, :] += sum_b dy[b, t, :] (learned positions; accumulated).
  virtual void positions_backward(float* dpositions, const float* dy, int B, int T, int D) = 0;

  // ---- loss ---------------------------------------------------------------------------------------------
  // Label-smoothed cross-entropy over logits [N, V] against targets [N]; rows whose target == ignore_id
  // (padding) contribute nothing. Smoothed target q = (1 - eps) * onehot + eps / V.
  // Writes per-row loss[N] and nll[N] (plain -log p(target), for perplexity; both 0 on ignored rows) and,
  // in place of the logits, the gradient of (grad_scale * sum of losses): (softmax - q) * grad_scale
  // (0 on ignored rows). Fusing loss and gradient saves two passes over the [N, V] logits.
  virtual void cross_entropy_forward_backward(float* loss, float* nll, float* logits, const int32_t* targets,
                                              int64_t N, int V, float eps, int32_t ignore_id,
                                              float grad_scale) = 0;
  // Inference: log_softmax in place over rows of [N, V].
  virtual void log_softmax(float* x, int64_t N, int V) = 0;

  // ---- optimizer ----------------------------------------------------------------------------------------
  // Adam (Kingma & Ba) with bias correction, step >= 1: m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
  // param -= lr * (m / (1 - b1^step)) / (sqrt(v / (1 - b2^step)) + eps).  Decoupled weight decay if > 0.
  // param_bf16: null, or [n] receiving the updated param rounded to bf16 (bf16_weights_to_write).
  virtual void adam_step(float* param, float* m, float* v, const float* grad, int64_t n, float lr, float beta1,
                         float beta2, float eps, float weight_decay, int64_t step, uint16_t* param_bf16) = 0;

  // ---- layout -------------------------------------------------------------------------------------------
  // Copy rows: dst[i, :] = src[index[i], :] for i < N (beam reordering of KV caches). D columns.
  virtual void gather_rows(float* dst, const float* src, const int32_t* index, int64_t N, int64_t D) = 0;
  // The reverse: dst[index[i], :] = src[i, :] for i < N, the indices distinct (a few values written into
  // a device matrix in one call instead of one host transfer each).
  virtual void scatter_rows(float* dst, const float* src, const int32_t* index, int64_t N, int64_t D) = 0;

  // ---- decoding -------------------------------------------------------------------------------------------
  // Attention of ONE query per row over keys addressed by row number, so that beam search can reorder
  // hypotheses without moving cached keys/values: key j of row r is row key_rows[r * max_keys + j] of k and
  // of v (row stride ld elements), for j < key_counts[r] (>= 1). Per row and head h (columns h*Dh ..):
  //   p_j = softmax_j(scale * q[r] . k[key_j]),  ctx[r] = sum_j p_j v[key_j].
  // q [rows, H*Dh] (row stride ldq), ctx [rows, H*Dh] (row stride ldc). probs: null, or [rows, H, max_keys]
  // receiving p (exact 0 for j >= key_counts[r]). The bits of a row depend only on that row's inputs (CPU:
  // fixed summation order per row, whatever rows or threads).
  virtual void attention_decode(float* ctx, int64_t ldc, float* probs, const float* q, int64_t ldq, const float* k,
                                const float* v, int64_t ld, const int32_t* key_rows, const int32_t* key_counts,
                                int rows, int max_keys, int H, int Dh, float scale) = 0;
  // Per row of x [rows, V]: the k largest values, best first, and their column indices; ties go to the
  // lower index, NaN ranks as -inf (and comes back as the NaN it is). k <= V. values, indices: [rows, k].
  virtual void topk(float* values, int32_t* indices, const float* x, int64_t rows, int V, int k) = 0;

  // ---- fused kernels (optional) -------------------------------------------------------------------------
  // Compositions of the primitives above run as one kernel, with the same results up to rounding. A device
  // says which it runs in its current modes; where it does not, ops/ composes the primitives instead, and
  // the call is never reached (the defaults throw).
  enum class Fused { residual_layer_norm, attention, log_softmax_topk };
  virtual bool fuses(Fused /*kernel*/) const { return false; }

  // The end of a post-LN sub-layer: sum = residual + dropout(x + bias) (bias may be null: none), y = layer
  // norm of sum as layer_norm_forward (mean, rstd saved). x, residual, sum, y [N, D]; sum may alias x, y
  // aliases nothing. mask: N * D bytes a backend may use to keep the dropout flags for backward (p > 0;
  // may be null). Composed: add_bias, dropout_add_forward, layer_norm_forward.
  virtual void residual_layer_norm_forward(float* y, float* sum, float* mean, float* rstd, uint8_t* mask,
                                           const float* x, const float* bias, const float* residual,
                                           const float* gamma, const float* beta, int64_t N, int D, float eps, float p,
                                           DropoutKey key);
  // Its backward: dres = d(sum) (the residual path's gradient; may alias dy), dx = dropout mask * dres (the
  // sub-layer output's gradient; aliases nothing), both assigned; dgamma, dbeta, dbias (may be null)
  // accumulated; mask as forward left it. Composed: layer_norm_backward, dropout_backward, bias_backward.
  virtual void residual_layer_norm_backward(float* dres, float* dx, float* dgamma, float* dbeta, float* dbias,
                                            const float* dy, const float* sum, const float* mean, const float* rstd,
                                            const uint8_t* mask, const float* gamma, int64_t N, int D, float p,
                                            DropoutKey key);

  // Scaled dot-product attention for training and teacher-forced passes, over B sentences and H heads
  // (AttentionForwardArgs). Per (b, h):
  //   probs = softmax(mask(scale * q k^T)), masked as attention_softmax_forward (query_offset 0);
  //   w = dropout(probs) with the mask dropout_forward(key) draws over the flat [B, H, Tq, Tk] probs (p > 0);
  //   ctx = w v.
  // Composed (ops/attention_composed.cpp): gemm_batched, attention_softmax_forward, dropout_forward.
  virtual void attention_forward(const AttentionForwardArgs& a);
  // Its backward: dq, dk, dv assigned.
  virtual void attention_backward(const AttentionBackwardArgs& a);

  // topk of the rows of log_softmax(x) (one pass over logits still in cache instead of writing the
  // log-probabilities and reading them back): values = x - shift for the k best columns, shift[r] =
  // max + log(sum exp(x - max)) of row r, so any column's log-probability is x[r, c] - shift[r]. x may be
  // overwritten. Composed: log_softmax in place, then topk, and shift 0.
  virtual void log_softmax_topk(float* values, int32_t* indices, float* shift, float* x, int64_t rows, int V, int k);

  // ---- optional kernels ---------------------------------------------------------------------------------
  // y = act(x + bias), x/y [N, F], y may alias x: the swish and gelu of imported models, for inference
  // (no dropout, no backward). The default throws: a device without it refuses such models by name.
  virtual void bias_activation_forward(float* y, const float* x, const float* bias, int64_t N, int F, Activation a);
};

// Threads: `threads` <= 0 means all cores. The CPU backend owns its thread count (no global
// omp_set_num_threads elsewhere); oneDNN and tt's loops share the one OpenMP runtime.
// device: "cpu", "cuda" (= cuda:0), "cuda:N", "auto" (CUDA when built with it and a GPU is present).
std::unique_ptr<Backend> make_backend(const std::string& device, int threads);

// True if this build has the CUDA backend and a GPU is visible.
bool cuda_available();

}  // namespace tt::backend
