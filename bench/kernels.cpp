// CPU kernel timings on training-step shapes (not a test): GEMM GFLOP/s to set against the oneDNN GEMM
// peak bench/train_speed.sh measures first, and the non-GEMM kernels in GB/s or µs per call.
//
// Built by CMake (bench/CMakeLists.txt, target bench_kernels).
// Run:  build/bin/bench_kernels [THREADS]   (default 2)
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <vector>

#include "backend/backend.h"
#include "ops/attention_composed.h"
#include "bench_timer.h"

namespace {

double time_it(const std::function<void()>& f) { return tt::bench::time_it(f, 0.3); }

std::vector<float> filled(size_t n, float v = 0.01f) { return std::vector<float>(n, v); }

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  auto be = tt::backend::make_backend("cpu", threads);
  std::printf("%s\n", be->name().c_str());

  // ---- GEMM: the linear layers of `small` (D 256, F 1024) and `base` (D 512, F 2048), N = 64*32 tokens.
  struct G { const char* what; bool ta, tb; int M, N, K; };
  const G gemms[] = {
      {"small qkv  x*W^T  ", false, true, 2048, 768, 256},   {"small ffn1 x*W^T  ", false, true, 2048, 1024, 256},
      {"small ffn2 x*W^T  ", false, true, 2048, 256, 1024},  {"small dW   dy^T*x ", true, false, 1024, 256, 2048},
      {"small dx   dy*W   ", false, false, 2048, 256, 1024}, {"small out  x*E^T  ", false, true, 2048, 8000, 256},
      {"base  ffn1 x*W^T  ", false, true, 2048, 2048, 512},  {"base  ffn2 x*W^T  ", false, true, 2048, 512, 2048},
      {"base  out  x*E^T  ", false, true, 2048, 8000, 512},  {"base  dE   dy^T*x ", true, false, 8000, 512, 2048},
      // gemm_peak.cpp's --train shapes (its sgemm_NT rows are the figures to compare with).
      {"peak  attn proj   ", false, true, 4096, 512, 512},   {"peak  FFN up      ", false, true, 4096, 2048, 512},
      {"peak  FFN down    ", false, true, 4096, 512, 2048},  {"peak  output proj ", false, true, 4096, 8000, 512},
  };
  for (const G& g : gemms) {
    auto A = filled(size_t(g.M) * g.K), B = filled(size_t(g.K) * g.N), C = filled(size_t(g.M) * g.N);
    int64_t lda = g.ta ? g.M : g.K, ldb = g.tb ? g.K : g.N;
    double s = time_it([&] { be->gemm(g.ta, g.tb, g.M, g.N, g.K, 1.0f, A.data(), lda, B.data(), ldb, 0.0f, C.data(), g.N); });
    std::printf("gemm %s M=%5d N=%5d K=%5d  %8.1f GFLOP/s\n", g.what, g.M, g.N, g.K, 2.0 * g.M * g.N * g.K / s * 1e-9);
  }

  // ---- attention products on [B, T, H, Dh]: oneDNN matmul (gemm_batched) vs a loop of sgemm calls.
  for (auto [H, Dh] : {std::pair<int, int>{4, 64}, {8, 64}}) {
    const int B = 64, T = 32;
    auto Q = filled(size_t(B) * T * H * Dh), K = filled(size_t(B) * T * H * Dh), S = filled(size_t(B) * H * T * T);
    tt::backend::MatrixStrides qs{int64_t(T) * H * Dh, Dh, int64_t(H) * Dh}, ss{int64_t(H) * T * T, int64_t(T) * T, T};
    double flops = 2.0 * B * H * T * T * Dh;
    double s1 = time_it([&] {
      be->gemm_batched(false, true, B, H, T, T, Dh, 0.125f, Q.data(), qs, K.data(), qs, 0.0f, S.data(), ss);
    });
    double s2 = time_it([&] {
#pragma omp parallel for num_threads(threads)
      for (int i = 0; i < B * H; ++i) {
        int b = i / H, h = i % H;
        dnnl_sgemm('N', 'T', T, T, Dh, 0.125f, Q.data() + b * qs.batch1 + h * qs.batch2, qs.ld,
                   K.data() + b * qs.batch1 + h * qs.batch2, qs.ld, 0.0f, S.data() + b * ss.batch1 + h * ss.batch2, T);
      }
    });
    double s3 = time_it([&] {
      be->gemm_batched(false, false, B, H, T, Dh, T, 1.0f, S.data(), ss, K.data(), qs, 0.0f, Q.data(), qs);
    });
    std::printf("attn H=%d Dh=%d QK^T matmul %7.1f us (%6.1f GFLOP/s), sgemm loop %7.1f us; PV matmul %7.1f us\n", H, Dh,
                s1 * 1e6, flops / s1 * 1e-9, s2 * 1e6, s3 * 1e6);
  }

  // ---- fused attention (one kernel per call) vs the default composition (batched matmuls, softmax, dropout):
  // synthetic 64 x 32 batches of tiny and base, and a 4,096-token Multi30k batch of tiny (227 sentences of 18).
  struct AttentionShape {
    int B, T, H, Dh;
  };
  for (auto [B, T, H, Dh] : {AttentionShape{64, 32, 4, 32}, {227, 18, 4, 32}, {64, 32, 8, 64}}) {
    const int D = H * Dh;
    const float p = 0.1f, scale = 1.0f / 8;
    tt::backend::DropoutKey key{1, 2};
    auto qkv = filled(size_t(B) * T * 3 * D), ctx = filled(size_t(B) * T * D), dqkv = filled(qkv.size());
    auto probs = filled(size_t(B) * H * T * T), dropped = filled(probs.size()), dprobs = filled(probs.size());
    std::vector<int32_t> lens(B, T - 2);
    const float *q = qkv.data(), *k = q + D, *v = k + D;
    float *dq = dqkv.data(), *dk = dq + D, *dv = dk + D;
    double flops = 4.0 * B * H * T * T * Dh;
    tt::backend::Backend& b = *be;
    std::vector<uint8_t> flags(probs.size());
    tt::backend::AttentionForwardArgs fa;
    fa.z = {B, H, T, T, Dh};
    fa.scale = scale, fa.causal = true, fa.p = p, fa.key = key;
    fa.ctx = {ctx.data(), D}, fa.probs = probs.data(), fa.flags = flags.data();
    fa.q = {q, 3 * D}, fa.k = {k, 3 * D}, fa.v = {v, 3 * D}, fa.key_lengths = lens.data();
    tt::backend::AttentionBackwardArgs ba;
    ba.z = fa.z, ba.scale = scale, ba.p = p, ba.key = key;
    ba.dq = {dq, 3 * D}, ba.dk = {dk, 3 * D}, ba.dv = {dv, 3 * D}, ba.dctx = {ctx.data(), D};
    ba.probs = probs.data(), ba.flags = flags.data(), ba.q = fa.q, ba.k = fa.k, ba.v = fa.v;
    double f1 = time_it([&] { b.attention_forward(fa); });
    double f2 = time_it([&] { tt::ops::composed_attention_forward(b, fa, dropped.data()); });
    double b1 = time_it([&] { b.attention_backward(ba); });
    double b2 = time_it([&] { tt::ops::composed_attention_backward(b, ba, dprobs.data(), dropped.data()); });
    std::printf("attention B=%d H=%d T=%d Dh=%d: forward fused %7.1f us (%5.1f GFLOP/s), composed %7.1f us; "
                "backward fused %7.1f us, composed %7.1f us\n", B, H, T, Dh, f1 * 1e6, flops / f1 * 1e-9, f2 * 1e6,
                b1 * 1e6, b2 * 1e6);
  }

  // ---- non-GEMM kernels.
  const int64_t N = 2048;
  const int V = 8000;
  {
    auto x = filled(N * V);
    std::vector<int32_t> t(N, 5);
    auto loss = filled(N), nll = filled(N);
    double s = time_it([&] { be->cross_entropy_forward_backward(loss.data(), nll.data(), x.data(), t.data(), N, V, 0.1f, -1, 1.0f); });
    std::printf("cross_entropy [%ld, %d]          %8.1f us  (%.1f GB/s)\n", long(N), V, s * 1e6, 8.0 * N * V / s * 1e-9);
  }
  {
    const int B = 64, H = 8, T = 32;
    auto sc = filled(size_t(B) * H * T * T);
    std::vector<int32_t> lens(B, T - 2);
    double s = time_it([&] { be->attention_softmax_forward(sc.data(), lens.data(), B, H, T, T, 0.125f, true, 0); });
    auto g = filled(sc.size());
    double s2 = time_it([&] { be->attention_softmax_backward(g.data(), sc.data(), B, H, T, T, 0.125f); });
    std::printf("attention_softmax [64,8,32,32]  fwd %8.1f us  bwd %8.1f us\n", s * 1e6, s2 * 1e6);
  }
  for (int D : {256, 512}) {
    auto x = filled(N * D), y = filled(N * D), g = filled(D, 1.0f), b = filled(D), m = filled(N), r = filled(N);
    double s = time_it([&] { be->layer_norm_forward(y.data(), m.data(), r.data(), x.data(), g.data(), b.data(), N, D, 1e-5f); });
    auto dg = filled(D), db = filled(D);
    double s2 = time_it([&] { be->layer_norm_backward(y.data(), dg.data(), db.data(), y.data(), x.data(), m.data(), r.data(), g.data(), N, D); });
    std::printf("layer_norm [%ld, %d]  fwd %8.1f us  bwd %8.1f us\n", long(N), D, s * 1e6, s2 * 1e6);
    tt::backend::DropoutKey key{1, 2};
    double s3 = time_it([&] { be->dropout_add_forward(y.data(), y.data(), x.data(), N * D, 0.1f, key); });
    double s4 = time_it([&] { be->add_bias(y.data(), x.data(), g.data(), N, D); });
    double s5 = time_it([&] { be->bias_backward(dg.data(), y.data(), N, D); });
    std::printf("  dropout_add %8.1f us  add_bias %8.1f us  bias_backward %8.1f us\n", s3 * 1e6, s4 * 1e6, s5 * 1e6);
    {  // the end of a post-LN sub-layer (bias, dropout, residual, layer norm) and its backward
      auto sum = filled(N * D), res = filled(N * D), dres = filled(N * D), dx = filled(N * D), dbias = filled(D);
      std::vector<uint8_t> mask(N * D);
      double f = time_it([&] {
        be->residual_layer_norm_forward(y.data(), sum.data(), m.data(), r.data(), mask.data(), x.data(), b.data(),
                                        res.data(), g.data(), b.data(), N, D, 1e-5f, 0.1f, key);
      });
      double bw = time_it([&] {
        be->residual_layer_norm_backward(dres.data(), dx.data(), dg.data(), db.data(), dbias.data(), y.data(),
                                         sum.data(), m.data(), r.data(), mask.data(), g.data(), N, D, 0.1f, key);
      });
      std::printf("  residual_layer_norm  fwd %8.1f us  bwd %8.1f us\n", f * 1e6, bw * 1e6);
    }
    auto h = filled(N * 4 * D);
    double s6 = time_it([&] { be->bias_relu_dropout_forward(h.data(), h.data(), filled(4 * D).data(), N, 4 * D, 0.1f, key); });
    std::printf("  bias_relu_dropout [%ld, %d] %8.1f us\n", long(N), 4 * D, s6 * 1e6);
  }
  {
    const int64_t n = 7600000;
    auto p = filled(n), m = filled(n), v = filled(n), g = filled(n);
    std::vector<uint16_t> copy(static_cast<size_t>(n));  // bf16 training: the weights' copy in the same pass
    for (uint16_t* bf16 : {static_cast<uint16_t*>(nullptr), copy.data()}) {
      double s = time_it([&] {
        be->adam_step(p.data(), m.data(), v.data(), g.data(), n, 1e-3f, 0.9f, 0.98f, 1e-9f, 0.0f, 10, bf16);
      });
      const double bytes = (bf16 ? 22.0 : 20.0) * n;  // param, m, v read and written, grad read (+ the copy)
      std::printf("adam%s n=%ld  %8.1f us (%.1f GB/s)\n", bf16 ? "+bf16 copy" : "", long(n), s * 1e6,
                  bytes / s * 1e-9);
    }
  }
  return 0;
}
