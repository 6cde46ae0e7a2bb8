// Per-kernel profile of a training step (not a test): the model runs on a Backend decorator that times
// every kernel call by (kernel, shape), over a few synthetic Adam steps after warm-up. It shows what a
// step is made of — which GEMM shapes, how many small passes, how much time outside the GEMMs.
//
// Built by CMake (bench/CMakeLists.txt, target bench_step_profile).
// Run:  build/bin/bench_step_profile [PRESET=tiny] [THREADS=2] [STEPS=6] [DROPOUT=0.1] [SRC TGT SPM TOKENS]
//   synthetic batches 64 x 32 -> 32 (the benchmark's), or the corpus SRC/TGT (raw text, SentencePiece model SPM)
//   in token batches of TOKENS padded tokens a side (the demo: data/multi30k, 2048).
// Times are wall seconds per step and, beside them, process CPU seconds (on a shared, oversubscribed
// machine the CPU time of a 1-thread run is the steadier figure; with 2 threads it also counts spinning).
// Environment (for a GPU, or the shapes of bench/train_speed.sh and scripts/gpu-check.sh):
//   TT_PROFILE_DEVICE=cuda      the backend (default cpu). On a device that runs asynchronously every call
//                               is bracketed by synchronize(), so a row is the kernel's device time plus one
//                               launch and one synchronisation; the "issue" column is the host's share, the
//                               time until the call returned. The first line gives the step unprofiled.
//   TT_PROFILE_PRECISION=bf16   bf16 products (default fp32)
//   TT_PROFILE_BATCH=500x50x50  sentences x source x target tokens of the synthetic batches (default 64x32x32)
//   TT_PROFILE_VOCAB=37000      vocabulary (default 8000)
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/bf16_storage.h"
#include "data/parallel_corpus.h"
#include "data/spm_tokenizer.h"
#include "nn/config.h"
#include "nn/init.h"
#include "nn/transformer.h"
#include "train/batch_source.h"
#include "train/synthetic.h"
#include "train/trainer.h"

namespace {

using tt::backend::Backend;
using tt::backend::DropoutKey;
using tt::backend::MatrixStrides;

double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

struct Cost {
  double wall = 0, cpu = 0, issue = 0, min_call = 1e9;
  int64_t calls = 0;
  double flops = 0;
};

// Forwards every call to `inner`, timing it under a key "kernel shape"; its bf16 activation storage too, so
// that a bf16 step runs as it does in tt-train (kernels writing bf16 only, products reading them).
class TimingBackend final : public Backend, public tt::backend::Bf16Storage {
 public:
  explicit TimingBackend(Backend& inner) : inner_(inner), sync_(inner.device() != tt::backend::Device::cpu) {}
  bool recording = false;
  std::map<std::string, Cost> costs;

  template <class F>
  void timed(const std::string& key, double flops, F&& f) {
    if (!recording) {
      f();
      return;
    }
    if (sync_) inner_.synchronize();
    const auto w0 = std::chrono::steady_clock::now();
    const double c0 = cpu_now();
    f();
    Cost& c = costs[key];
    c.issue += std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    if (sync_) inner_.synchronize();
    const double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    c.wall += w;
    c.min_call = std::min(c.min_call, w);
    c.cpu += cpu_now() - c0;
    c.flops += flops;
    ++c.calls;
  }
  static std::string dims(std::initializer_list<int64_t> v) {
    std::string s;
    for (int64_t x : v) {
      if (!s.empty()) s += 'x';
      s += std::to_string(x);
    }
    return s;
  }

  // Product keys: "gemm NT 2048x512x512 +=", "gemm_batched NN 64x8 of 32x64x32", and which operands came
  // stored in bf16.
  static std::string gemm_key(bool ta, bool tb, int M, int N, int K, float beta) {
    return std::string("gemm ") + (ta ? "T" : "N") + (tb ? "T" : "N") + " " + dims({M, N, K}) +
           (beta != 0 ? " +=" : "");
  }
  static std::string batched_key(bool ta, bool tb, int b1, int b2, int M, int N, int K) {
    return std::string("gemm_batched ") + (ta ? "T" : "N") + (tb ? "T" : "N") + " " + dims({b1, b2}) + " of " +
           dims({M, N, K});
  }
  static std::string stored(bool a16, bool b16) { return std::string(a16 ? " A16" : "") + (b16 ? " B16" : ""); }

  tt::backend::Device device() const override { return inner_.device(); }
  std::string name() const override { return inner_.name(); }
  void* allocate(size_t bytes) override { return inner_.allocate(bytes); }
  void deallocate(void* p, size_t bytes) noexcept override { inner_.deallocate(p, bytes); }
  void copy_from_host(void* d, const void* s, size_t n) override { inner_.copy_from_host(d, s, n); }
  void copy_to_host(void* d, const void* s, size_t n) override { inner_.copy_to_host(d, s, n); }
  void copy(void* d, const void* s, size_t n) override {
    timed("copy " + std::to_string(n / 4), 0, [&] { inner_.copy(d, s, n); });
  }
  void fill(float* x, float v, int64_t n) override {
    timed("fill " + std::to_string(n), 0, [&] { inner_.fill(x, v, n); });
  }
  void synchronize() override { inner_.synchronize(); }
  bool set_row_invariant(bool on) override { return inner_.set_row_invariant(on); }
  bool set_matmul_precision(tt::backend::MatmulPrecision p) override { return inner_.set_matmul_precision(p); }
  tt::backend::MatmulPrecision matmul_precision() const override { return inner_.matmul_precision(); }
  std::string matmul_isa() const override { return inner_.matmul_isa(); }
  void hold_bf16_weights(const float* v, int64_t n) override {
    timed("hold_bf16_weights " + std::to_string(n), 0, [&] { inner_.hold_bf16_weights(v, n); });
  }
  void hold_written_bf16_weights(const float* v, int64_t n) override {
    timed("hold_written_bf16_weights " + std::to_string(n), 0, [&] { inner_.hold_written_bf16_weights(v, n); });
  }
  uint16_t* bf16_weights_to_write(int64_t n) override { return inner_.bf16_weights_to_write(n); }
  void release_bf16_weights() override { inner_.release_bf16_weights(); }
  void keep_bf16_operand(const float* v, int64_t n) override { inner_.keep_bf16_operand(v, n); }
  void forget_bf16_operand(const float* v) override { inner_.forget_bf16_operand(v); }

  void gemm(bool ta, bool tb, int M, int N, int K, float alpha, const float* A, int64_t lda, const float* B,
            int64_t ldb, float beta, float* C, int64_t ldc) override {
    timed(gemm_key(ta, tb, M, N, K, beta), 2.0 * M * N * K,
          [&] { inner_.gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); });
  }
  void gemm_batched(bool ta, bool tb, int b1, int b2, int M, int N, int K, float alpha, const float* A,
                    MatrixStrides a, const float* B, MatrixStrides b, float beta, float* C,
                    MatrixStrides c) override {
    timed(batched_key(ta, tb, b1, b2, M, N, K), 2.0 * b1 * b2 * M * N * K,
          [&] { inner_.gemm_batched(ta, tb, b1, b2, M, N, K, alpha, A, a, B, b, beta, C, c); });
  }
  void add_bias(float* y, const float* x, const float* bias, int64_t N, int D) override {
    timed("add_bias " + dims({N, D}), 0, [&] { inner_.add_bias(y, x, bias, N, D); });
  }
  void bias_backward(float* db, const float* dy, int64_t N, int D) override {
    timed("bias_backward " + dims({N, D}), 0, [&] { inner_.bias_backward(db, dy, N, D); });
  }
  void add(float* y, const float* a, const float* b, int64_t n) override {
    timed("add " + std::to_string(n), 0, [&] { inner_.add(y, a, b, n); });
  }
  void axpy(float* y, float alpha, const float* x, int64_t n) override {
    timed("axpy " + std::to_string(n), 0, [&] { inner_.axpy(y, alpha, x, n); });
  }
  void scale(float* x, float alpha, int64_t n) override {
    timed("scale " + std::to_string(n), 0, [&] { inner_.scale(x, alpha, n); });
  }
  double sum_squares(const float* x, int64_t n) override {
    double r = 0;
    timed("sum_squares " + std::to_string(n), 0, [&] { r = inner_.sum_squares(x, n); });
    return r;
  }
  void bias_relu_dropout_forward(float* y, const float* x, const float* bias, int64_t N, int F, float p,
                                 DropoutKey key) override {
    timed("bias_relu_dropout_forward " + dims({N, F}), 0,
          [&] { inner_.bias_relu_dropout_forward(y, x, bias, N, F, p, key); });
  }
  void relu_dropout_backward(float* dx, const float* dy, const float* y, int64_t n, float p) override {
    timed("relu_dropout_backward " + std::to_string(n), 0, [&] { inner_.relu_dropout_backward(dx, dy, y, n, p); });
  }
  void dropout_add_forward(float* y, const float* r, const float* x, int64_t n, float p, DropoutKey key) override {
    timed("dropout_add_forward " + std::to_string(n), 0, [&] { inner_.dropout_add_forward(y, r, x, n, p, key); });
  }
  void dropout_forward(float* y, const float* x, int64_t n, float p, DropoutKey key) override {
    timed("dropout_forward " + std::to_string(n), 0, [&] { inner_.dropout_forward(y, x, n, p, key); });
  }
  void dropout_backward(float* dx, const float* dy, int64_t n, float p, DropoutKey key) override {
    timed("dropout_backward " + std::to_string(n), 0, [&] { inner_.dropout_backward(dx, dy, n, p, key); });
  }
  void layer_norm_forward(float* y, float* mean, float* rstd, const float* x, const float* g, const float* b,
                          int64_t N, int D, float eps) override {
    timed("layer_norm_forward " + dims({N, D}), 0,
          [&] { inner_.layer_norm_forward(y, mean, rstd, x, g, b, N, D, eps); });
  }
  void layer_norm_backward(float* dx, float* dg, float* db, const float* dy, const float* x, const float* mean,
                           const float* rstd, const float* g, int64_t N, int D) override {
    timed("layer_norm_backward " + dims({N, D}), 0,
          [&] { inner_.layer_norm_backward(dx, dg, db, dy, x, mean, rstd, g, N, D); });
  }
  void residual_layer_norm_forward(float* y, float* sum, float* mean, float* rstd, uint8_t* mask, const float* x,
                                   const float* bias, const float* r, const float* g, const float* b, int64_t N, int D,
                                   float eps, float p, DropoutKey key) override {
    timed("residual_layer_norm_forward " + dims({N, D}), 0,
          [&] { inner_.residual_layer_norm_forward(y, sum, mean, rstd, mask, x, bias, r, g, b, N, D, eps, p, key); });
  }
  void residual_layer_norm_backward(float* dres, float* dx, float* dg, float* db, float* dbias, const float* dy,
                                    const float* sum, const float* mean, const float* rstd, const uint8_t* mask,
                                    const float* g, int64_t N, int D, float p, DropoutKey key) override {
    timed("residual_layer_norm_backward " + dims({N, D}), 0, [&] {
      inner_.residual_layer_norm_backward(dres, dx, dg, db, dbias, dy, sum, mean, rstd, mask, g, N, D, p, key);
    });
  }
  void attention_softmax_forward(float* s, const int32_t* lengths, int B, int H, int Tq, int Tk, float scale,
                                 bool causal, int offset) override {
    timed("attention_softmax_forward " + dims({B, H, Tq, Tk}), 0,
          [&] { inner_.attention_softmax_forward(s, lengths, B, H, Tq, Tk, scale, causal, offset); });
  }
  void attention_softmax_backward(float* g, const float* p, int B, int H, int Tq, int Tk, float scale) override {
    timed("attention_softmax_backward " + dims({B, H, Tq, Tk}), 0,
          [&] { inner_.attention_softmax_backward(g, p, B, H, Tq, Tk, scale); });
  }
  bool fuses(Fused kernel) const override { return inner_.fuses(kernel); }
  void attention_forward(const tt::backend::AttentionForwardArgs& a) override {
    const auto& z = a.z;
    timed("attention_forward " + dims({z.B, z.H, z.Tq, z.Tk, z.Dh}), 4.0 * z.B * z.H * z.Tq * z.Tk * z.Dh,
          [&] { inner_.attention_forward(a); });
  }
  void attention_backward(const tt::backend::AttentionBackwardArgs& a) override {
    const auto& z = a.z;
    timed("attention_backward " + dims({z.B, z.H, z.Tq, z.Tk, z.Dh}), 8.0 * z.B * z.H * z.Tq * z.Tk * z.Dh,
          [&] { inner_.attention_backward(a); });
  }
  void embedding_forward(float* y, const int32_t* ids, const float* table, const float* pos, float scale, int B,
                         int T, int D, int offset) override {
    timed("embedding_forward " + dims({B, T, D}), 0,
          [&] { inner_.embedding_forward(y, ids, table, pos, scale, B, T, D, offset); });
  }
  void embedding_backward(float* dt, const float* dy, const int32_t* ids, float scale, int64_t N, int D) override {
    timed("embedding_backward " + dims({N, D}), 0, [&] { inner_.embedding_backward(dt, dy, ids, scale, N, D); });
  }
  void positions_backward(float* dp, const float* dy, int B, int T, int D) override {
    timed("positions_backward", 0, [&] { inner_.positions_backward(dp, dy, B, T, D); });
  }
  void cross_entropy_forward_backward(float* loss, float* nll, float* logits, const int32_t* t, int64_t N, int V,
                                      float eps, int32_t ignore, float gs) override {
    timed("cross_entropy " + dims({N, V}), 0,
          [&] { inner_.cross_entropy_forward_backward(loss, nll, logits, t, N, V, eps, ignore, gs); });
  }
  void log_softmax(float* x, int64_t N, int V) override { inner_.log_softmax(x, N, V); }
  void adam_step(float* p, float* m, float* v, const float* g, int64_t n, float lr, float b1, float b2, float eps,
                 float wd, int64_t step, uint16_t* p16) override {
    timed(std::string(p16 ? "adam_step+bf16 " : "adam_step ") + std::to_string(n), 0,
          [&] { inner_.adam_step(p, m, v, g, n, lr, b1, b2, eps, wd, step, p16); });
  }
  void gather_rows(float* d, const float* s, const int32_t* idx, int64_t N, int64_t D) override {
    inner_.gather_rows(d, s, idx, N, D);
  }
  void scatter_rows(float* d, const float* s, const int32_t* idx, int64_t N, int64_t D) override {
    inner_.scatter_rows(d, s, idx, N, D);
  }
  void attention_decode(float* ctx, int64_t ldc, float* probs, const float* q, int64_t ldq, const float* k,
                        const float* v, int64_t ld, const int32_t* rows, const int32_t* counts, int n, int max_keys,
                        int H, int Dh, float scale) override {
    inner_.attention_decode(ctx, ldc, probs, q, ldq, k, v, ld, rows, counts, n, max_keys, H, Dh, scale);
  }
  void topk(float* values, int32_t* indices, const float* x, int64_t rows, int V, int k) override {
    inner_.topk(values, indices, x, rows, V, k);
  }

  // ---- bf16 activation storage ----
  tt::backend::Bf16Storage* bf16_storage() override { return inner_.bf16_storage() ? this : nullptr; }
  void round_to_bf16(uint16_t* y16, const float* x, const float* bias, int b1, int b2, int64_t rows, int64_t cols,
                     MatrixStrides s) override {
    timed("round_to_bf16 " + dims({b1, b2, rows, cols}) + (bias ? " +bias" : ""), 0,
          [&] { inner_.bf16_storage()->round_to_bf16(y16, x, bias, b1, b2, rows, cols, s); });
  }
  void bias_relu_dropout_forward_bf16(uint16_t* y16, const float* x, const float* bias, int64_t N, int F, float p,
                                      DropoutKey key) override {
    timed("bias_relu_dropout_forward_bf16 " + dims({N, F}), 0,
          [&] { inner_.bf16_storage()->bias_relu_dropout_forward_bf16(y16, x, bias, N, F, p, key); });
  }
  void dropout_forward_bf16(uint16_t* y16, const float* x, int64_t n, float p, DropoutKey key) override {
    timed("dropout_forward_bf16 " + std::to_string(n), 0,
          [&] { inner_.bf16_storage()->dropout_forward_bf16(y16, x, n, p, key); });
  }
  void relu_dropout_backward_bf16(float* dx, float* db, const float* dy, const uint16_t* y16, int64_t N, int F,
                                  float p) override {
    timed("relu_dropout_backward_bf16 " + dims({N, F}) + (db ? " +dbias" : ""), 0,
          [&] { inner_.bf16_storage()->relu_dropout_backward_bf16(dx, db, dy, y16, N, F, p); });
  }
  void residual_layer_norm_backward_bf16(float* dres, uint16_t* dx16, float* dg, float* db, float* dbias,
                                         const float* dy, const float* sum, const float* mean, const float* rstd,
                                         const uint8_t* mask, const float* g, int64_t N, int D, float p,
                                         DropoutKey key) override {
    timed("residual_layer_norm_backward " + dims({N, D}) + " dx16", 0, [&] {
      inner_.bf16_storage()->residual_layer_norm_backward_bf16(dres, dx16, dg, db, dbias, dy, sum, mean, rstd, mask, g,
                                                               N, D, p, key);
    });
  }
  void gemm_bf16_operand(bool ta, bool tb, int M, int N, int K, float alpha, const void* A, int64_t lda, bool a16,
                         const void* B, int64_t ldb, bool b16, float beta, float* C, int64_t ldc) override {
    timed(gemm_key(ta, tb, M, N, K, beta) + stored(a16, b16), 2.0 * M * N * K, [&] {
      inner_.bf16_storage()->gemm_bf16_operand(ta, tb, M, N, K, alpha, A, lda, a16, B, ldb, b16, beta, C, ldc);
    });
  }
  void gemm_batched_bf16_operand(bool ta, bool tb, int b1, int b2, int M, int N, int K, float alpha, const void* A,
                                 MatrixStrides a, bool a16, const void* B, MatrixStrides b, bool b16, float beta,
                                 float* C, MatrixStrides c) override {
    timed(batched_key(ta, tb, b1, b2, M, N, K) + stored(a16, b16), 2.0 * b1 * b2 * M * N * K, [&] {
      inner_.bf16_storage()->gemm_batched_bf16_operand(ta, tb, b1, b2, M, N, K, alpha, A, a, a16, B, b, b16, beta,
                                                       C, c);
    });
  }

 private:
  Backend& inner_;
  bool sync_;  // bracket each call by synchronize(): the device runs asynchronously
};

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string preset = argc > 1 ? argv[1] : "tiny";
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  const int steps = argc > 3 ? std::atoi(argv[3]) : 6;
  const float dropout = argc > 4 ? std::strtof(argv[4], nullptr) : 0.1f;
  const std::string device = env_or("TT_PROFILE_DEVICE", "cpu"), precision = env_or("TT_PROFILE_PRECISION", "fp32");
  int batch = 64, src_len = 32, tgt_len = 32;
  if (std::sscanf(env_or("TT_PROFILE_BATCH", "64x32x32").c_str(), "%dx%dx%d", &batch, &src_len, &tgt_len) != 3) {
    std::fprintf(stderr, "bench_step_profile: TT_PROFILE_BATCH must be SENTENCESxSRCxTGT, e.g. 500x50x50\n");
    return 2;
  }
  auto inner = tt::backend::make_backend(device, threads);
  TimingBackend be(*inner);
  if (precision == "bf16" && !be.set_matmul_precision(tt::backend::MatmulPrecision::bf16)) {
    std::fprintf(stderr, "bench_step_profile: no bf16 products on %s\n", be.name().c_str());
    return 1;
  }
  tt::nn::ModelConfig config = tt::nn::preset(preset);
  config.vocab_size_src = config.vocab_size_tgt = std::atoi(env_or("TT_PROFILE_VOCAB", "8000").c_str());
  config.dropout = config.attention_dropout = config.relu_dropout = dropout;
  tt::nn::Transformer model(config, be);
  tt::nn::init_parameters(model.params(), config, 1);
  std::unique_ptr<tt::train::BatchSource> source;
  std::optional<tt::data::ParallelCorpus> corpus;
  if (argc > 8) {
    const auto spm = tt::data::SpmTokenizer::load(argv[7]);
    corpus.emplace(tt::data::ParallelCorpus::load(argv[5], argv[6], spm, spm, {}, threads));
    tt::train::BatcherOptions bo;
    bo.batch_tokens = std::atoll(argv[8]);
    source = std::make_unique<tt::train::CorpusBatches>(*corpus, bo);
  } else {
    source = std::make_unique<tt::train::SyntheticBatches>(config, tt::train::SyntheticTask::random, batch, src_len,
                                                           tgt_len, 1);
  }
  tt::train::TrainerOptions to;
  to.schedule.warmup_steps = 4000;
  tt::train::Trainer trainer(model, *source, to);
  for (int i = 0; i < 3; ++i) trainer.step();  // warm-up: the arena grows, oneDNN creates its primitives
  std::vector<double> plain_s;  // the step as it runs without the profile's timers
  for (int i = 0; i < steps; ++i) plain_s.push_back(trainer.step().seconds);
  std::sort(plain_s.begin(), plain_s.end());
  be.recording = true;
  const auto w0 = std::chrono::steady_clock::now();
  const double c0 = cpu_now();
  int64_t tokens = 0;
  std::vector<double> step_s;
  for (int i = 0; i < steps; ++i) {
    const tt::train::StepStats st = trainer.step();
    tokens += st.tokens;
    step_s.push_back(st.seconds);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count() / steps;
  const double cpu_total = (cpu_now() - c0) / steps;
  std::sort(step_s.begin(), step_s.end());
  const double median_s = step_s[step_s.size() / 2];
  struct {
    double median_step_s, tgt_tok_s;
  } r{median_s, double(tokens) / steps / median_s};
  std::vector<std::pair<std::string, Cost>> rows(be.costs.begin(), be.costs.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.wall > b.second.wall; });
  double kernel_wall = 0, gemm_wall = 0, gemm_flops = 0, other_floor = 0;
  for (const auto& [k, c] : rows) {
    kernel_wall += c.wall;
    if (c.flops == 0) {
      other_floor += c.min_call * double(c.calls);
    } else {
      gemm_wall += c.wall;
      gemm_flops += c.flops;
    }
  }
  std::printf("%s, %s, %s, batch %dx%dx%d, vocab %d: unprofiled median step %.1f ms (%.0f tgt tok/s)\n",
              preset.c_str(), be.name().c_str(), precision.c_str(), batch, src_len, tgt_len, config.vocab_size_tgt,
              plain_s[plain_s.size() / 2] * 1e3, double(tokens) / steps / plain_s[plain_s.size() / 2]);
  std::printf("%s, %s, %d threads, %d steps: %.1f ms/step wall (median step %.1f ms, %.0f tgt tok/s), %.1f ms CPU\n",
              preset.c_str(), be.name().c_str(), threads, steps, wall * 1e3, r.median_step_s * 1e3, r.tgt_tok_s,
              cpu_total * 1e3);
  // On a shared machine the other kernels' time varies by a quarter from run to run; every call of a shape
  // at that shape's fastest call is the steadier figure for comparing two builds.
  std::printf("GEMMs %.1f ms/step (%.1f GFLOP/s), other kernels %.1f ms (%.1f ms at each shape's fastest call), "
              "outside kernels %.1f ms\n",
              gemm_wall / steps * 1e3, gemm_flops / gemm_wall * 1e-9, (kernel_wall - gemm_wall) / steps * 1e3,
              other_floor / steps * 1e3, (wall - kernel_wall / steps) * 1e3);
  // By kernel (gemm: by transposes and whether it is the output projection, N or M = the vocabulary).
  std::map<std::string, Cost> kinds;
  for (const auto& [k, c] : rows) {
    std::string kind = k.substr(0, k.find(' '));
    if (kind == "gemm") {
      const bool vocab = k.find(std::to_string(config.vocab_size_tgt)) != std::string::npos;
      kind = k.substr(0, 7) + (vocab ? " vocab" : " d_model");
    }
    Cost& t = kinds[kind];
    t.wall += c.wall;
    t.cpu += c.cpu;
    t.issue += c.issue;
    t.calls += c.calls;
    t.flops += c.flops;
  }
  std::vector<std::pair<std::string, Cost>> by_kind(kinds.begin(), kinds.end());
  std::sort(by_kind.begin(), by_kind.end(), [](const auto& a, const auto& b) { return a.second.wall > b.second.wall; });
  std::printf("%8s %8s %8s %7s %6s %9s  %s\n", "ms/step", "cpu ms", "issue ms", "%", "calls", "GFLOP/s", "kernel");
  for (const auto& [k, c] : by_kind)
    std::printf("%8.2f %8.2f %8.2f %6.1f%% %6.1f %9s  %s\n", c.wall / steps * 1e3, c.cpu / steps * 1e3,
                c.issue / steps * 1e3, 100 * c.wall / steps / wall, double(c.calls) / steps,
                c.flops > 0 ? std::to_string(int(c.flops / c.wall * 1e-9)).c_str() : "", k.c_str());
  std::printf("\n%8s %8s %7s %6s %9s %9s  %s\n", "ms/step", "cpu ms", "%", "calls", "GFLOP/s", "min us", "kernel shape");
  for (const auto& [k, c] : rows)
    std::printf("%8.2f %8.2f %6.1f%% %6.1f %9s %9.0f  %s\n", c.wall / steps * 1e3, c.cpu / steps * 1e3,
                100 * c.wall / steps / wall, double(c.calls) / steps,
                c.flops > 0 ? std::to_string(int(c.flops / c.wall * 1e-9)).c_str() : "", c.min_call * 1e6, k.c_str());
  return 0;
}
