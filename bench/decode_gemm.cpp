// Decode-size products (not a test): x[M, K] * W[N, K]^T for M = 4..128 rows (beam 4 x 1..32 sentences),
// the shapes of `base` (D 512, F 2048, V 8000), through the backend's row-invariant path (tt-translate's)
// and the plain path (dnnl_sgemm), in GFLOP/s, and the row-invariant int8 path (--compute-type int8) in
// GOP/s (including the per-call quantization of x).
//
// Run:  build/bin/bench_decode_gemm [THREADS]   (default 1). With TT_BENCH_CPU_TIME set, times are process
// CPU seconds (robust on a busy machine with 1 thread; with more it also counts OpenMP spin-waiting).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <vector>

#include "backend/backend.h"
#include "bench_timer.h"

namespace {

double time_it(const std::function<void()>& f) { return tt::bench::time_it(f, 0.2); }

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  auto invariant = tt::backend::make_backend("cpu", threads);
  auto plain = tt::backend::make_backend("cpu", threads);
  auto int8 = tt::backend::make_backend("cpu", threads);
  invariant->set_row_invariant(true);
  int8->set_row_invariant(true);
  int8->set_matmul_precision(tt::backend::MatmulPrecision::int8);
  std::printf("%s\n", invariant->name().c_str());
  struct G { const char* what; int N, K; };
  const G shapes[] = {{"attn proj", 512, 512}, {"qkv      ", 1536, 512}, {"ffn1     ", 2048, 512},
                      {"ffn2     ", 512, 2048}, {"output   ", 8000, 512}};
  for (const G& g : shapes)
    for (int M : {4, 16, 64, 128}) {
      std::vector<float> A(size_t(M) * g.K, 0.01f), W(size_t(g.N) * g.K), C(size_t(M) * g.N);
      for (size_t i = 0; i < W.size(); ++i) W[i] = float(i % 97) * 1e-3f;
      const double flop = 2.0 * M * g.N * g.K;
      double s1 = time_it([&] {
        invariant->gemm(false, true, M, g.N, g.K, 1.0f, A.data(), g.K, W.data(), g.K, 0.0f, C.data(), g.N);
      });
      double s2 = time_it([&] {
        plain->gemm(false, true, M, g.N, g.K, 1.0f, A.data(), g.K, W.data(), g.K, 0.0f, C.data(), g.N);
      });
      double s3 = time_it([&] {
        int8->gemm(false, true, M, g.N, g.K, 1.0f, A.data(), g.K, W.data(), g.K, 0.0f, C.data(), g.N);
      });
      std::printf("%s M=%4d N=%5d K=%5d  row-invariant %6.1f GFLOP/s  sgemm %6.1f GFLOP/s  int8 %6.1f GOP/s\n", g.what,
                  M, g.N, g.K, flop / s1 * 1e-9, flop / s2 * 1e-9, flop / s3 * 1e-9);
    }
  return 0;
}
