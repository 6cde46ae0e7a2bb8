// Row-invariant products against constant weights (decoding): C[M, N] = A[M, K] · B[N, K]^T with B packed
// once into oneDNN's blocked layout, in column blocks of 256, and each block run by a oneDNN `matmul`
// primitive on fixed 16-row tiles. The bits of a row depend only on that row, K and N (the tile and block
// shapes are fixed; an input tail is padded to 16 rows), never on M or the thread count: tiles run
// single-threaded inside one OpenMP loop, block-major so that a thread keeps its weight block in cache.
//
// Why: dnnl_sgemm re-packs B on every call, which at decode sizes (M = 4..128 rows) can cost more than the
// product itself (one AVX-512 core, busy machine: M = 16, K = N = 512 took 0.52 ms with sgemm, 0.06 ms
// packed; at M = 128 the two were within noise). The packed copies double the weights' memory.
//
// B is recognised by its address and shape, and re-packed when a sample of 64 of its values changes: the
// weights of an inference model never change, and a training step changes every weight (a change to
// unsampled values only would go unseen: do not edit a few weights in place between products).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

namespace tt::backend::cpu {

class PackedGemm {
 public:
  static constexpr int kTileRows = 16, kBlockCols = 256;

  PackedGemm(dnnl::engine& engine, int threads) : engine_(engine), threads_(threads) {}

  // Returns false (and computes nothing) where oneDNN offers no primitive for the shape.
  bool run(int M, int N, int K, const float* A, int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc);

 private:
  struct Block {
    int c0 = 0, width = 0;
    dnnl::memory weights;  // packed [K, width]
  };
  struct Weights {
    std::vector<float> sample;  // the fingerprint
    std::vector<Block> blocks;
  };
  struct Kernel {  // one per (K, width)
    dnnl::matmul prim;
    dnnl::memory::desc a_md, b_md, c_md;  // b_md: the packed weights' layout
    size_t scratch_bytes = 0;
  };
  using WeightsKey = std::array<int64_t, 5>;  // address, N, K, ldb, lda
  using KernelKey = std::array<int64_t, 3>;   // K, width, lda

  Kernel* kernel(int K, int width, int64_t lda);  // null where oneDNN has none
  Weights* weights(const float* B, int N, int K, int64_t ldb, int64_t lda);
  static std::vector<float> fingerprint(const float* B, int N, int K, int64_t ldb);

  dnnl::engine& engine_;
  int threads_;
  std::map<WeightsKey, Weights> weights_;
  std::map<KernelKey, std::unique_ptr<Kernel>> kernels_;  // a null entry: oneDNN refused the shape
  std::vector<float> tail_a_;  // the last, partial tile of A padded to 16 rows (same stride)
  std::vector<std::vector<char>> scratch_;  // per thread
  std::vector<std::vector<float>> tiles_;   // per thread: the dense [16, width] output tile
  std::vector<dnnl::stream> streams_;       // per thread
};

}  // namespace tt::backend::cpu
