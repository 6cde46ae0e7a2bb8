// Row-invariant products against constant weights (decoding): C[M, N] = A[M, K] · B[N, K]^T with B packed
// once into oneDNN's blocked layout, in column blocks of 256 (up to 1024 where the width changes no bits,
// narrower for long rows: kBlockBytes), and each block run by a oneDNN `matmul` primitive on tiles of fixed
// heights. The bits of a row depend only on that row, K and N (the tile and block shapes are fixed; an input
// tail is padded to a whole tile), never on M or the thread count: tiles run single-threaded inside one
// OpenMP loop, block-major so that a thread keeps its weight block in cache.
// Tile height: 8 rows where oneDNN runs its brgemm kernels (AVX-512 and up), which compute each row alike;
// 16 where it falls back to its jit gemm (AVX2), whose results for a row differ below 16 rows. (8 rather
// than 16 runs a beam of 4 rows twice as fast; 4 lost ~5 % at 128 rows: bench/decode_gemm.cpp, Zen 4.)
// A float32 tail of at most 4 rows (one sentence's beam of 4) runs in a 4-row tile: brgemm gives a row the
// same bits in either (tests/backend/row_invariant_test.cpp compares every M with rows alone), and M = 4
// products ran 1.7-1.9x faster (49-55 -> 85-104 GFLOP/s, base shapes, one Zen 4 core). Before the 8-row
// tiles, float32 brgemm takes the rows in 64-row tiles (kTallTileRows; the same bits again, the test runs M
// up to 150): one oneDNN call instead of eight, each costing microseconds besides its sums. tt-translate
// float32, same outputs: `base` -9 % time with one worker, -6 % with two; demo model -6 % with two (Intel
// Xeon). (32 rows after the 64 or 128 before them measured as noise.) bf16 keeps 8 rows: its AMX kernels were
// not checked at 4 or 64 (avx512_core_bf16's give the same bits at 64, tested, but were not clearly faster).
//
// Why: dnnl_sgemm re-packs B on every call, which at decode sizes (M = 4..128 rows) can cost more than the
// product itself (one AVX-512 core, busy machine: M = 16, K = N = 512 took 0.52 ms with sgemm, 0.06 ms
// packed; at M = 128 the two were within noise). The packed copies double the weights' memory.
//
// int8 (tt-translate --compute-type int8): B is quantized per output column (row of B: scale = max|B_n| /
// 127) once when packed, A per row on every call (kernels/quantize.cpp), the products are exact int32 sums
// (oneDNN's VNNI / AMX int8 kernels where the CPU has them), and C = sum * scale_A[m] * scale_B[n]. A row
// is quantized from its own values and integer sums do not depend on their order, so any tiling keeps
// rows independent: 64-row tiles, then 16-row, then 4-row tiles for the rest (a beam of 4 costs 4 rows, not
// 16). Each tile is one oneDNN call costing a few microseconds besides its sums, as much as a 16-row tile of
// the demo model's 128-wide products: 64 rows took 2-5 % off int8 decoding (demo and `base`, Intel Xeon).
// Without VNNI (AVX2, plain AVX-512) oneDNN multiplies u8 x s8 pairs into saturating int16 sums, so weights
// get 7 bits there (|q| <= 63) and the sums stay exact. With AVX-512 VNNI, vnni_gemm.h's kernel replaces
// oneDNN for K a multiple of 4 (with AMX only up to K = 256: own_int8_max_k()): items of up to 64 rows by
// one block, the sums dequantized from registers (no tile buffer, no per-tile call), the same bits.
// tt-translate int8, same outputs, Intel Xeon without AMX: random demo-shaped model (d 128, 4 + 4 layers,
// 8,000 pieces) -13 to -17 % time, `base` -1 to -7 %.
//
// bf16 (--compute-type bf16, CPUs with AVX512-BF16 or AMX): B is rounded to bf16 once when packed, A on
// every call, and oneDNN sums the products in fp32. Rounding is per element, and every tile has the same
// height (the float32 rule; a tail is padded with zero rows), so a row's bits depend on that row alone.
//
// Decoding workers share one packed copy (share_store_of): each worker's PackedGemm has its own primitives,
// scratch and tiles, and all read the packed weights and adopted weights of one store, guarded by a mutex
// while a product looks up, packs or restores; the products themselves run unlocked on their own copy of
// the packed memory's handles (the packed memory is only read).
//
// B is recognised by its address and shape, and re-packed when a sample of 64 of its values changes: the
// weights of an inference model never change, and a training step changes every weight (a change to
// unsampled values only would go unseen: do not edit a few weights in place between products).
//
// Weights a model file stores (float32, or int8 / bf16 by tt-convert quantize) are adopted: B's address
// then stands for the stored values, read from the file when a block is packed and dropped after, and B's
// own memory is never read (inference leaves it unwritten): decoding holds the packed copy alone. Stored
// int8 / bf16 values are the ones packing B's fp32 originals would give (backend/quantized_weight.h), so
// the results are the same bits. A product over several adopted weights lying one after the other (the
// q, k, v projections as one [3D, D] product) reads them as one: the quantization is per row.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>

#include "backend/cpu/kernels/kernel_table.h"
#include "backend/cpu/vnni_gemm.h"
#include "backend/quantized_weight.h"

namespace tt::backend::cpu {

class PackedGemm {
 public:
  enum class Operands { f32, bf16, s8 };

  static constexpr int kBlockCols = 256;
  // Where a column's bits do not depend on its block (int8's exact sums, brgemm), blocks of up to 1024
  // columns within kBlockBytes: fewer oneDNN calls, each a few microseconds besides its sums. int8 `base`, one
  // worker on 2 threads: -4 % time; the demo model's K = 128 and 256 products, two workers: int8 -1 %,
  // float32 -2 to -4 % (Intel Xeon). (int8 had them once only for N >= 4096, when 16-row tiles left a
  // product of one or two blocks too few items for two threads; the 64-row tiles give them items.)
  static constexpr int kWideBlockCols = 1024;
  // A packed block holds at most this many bytes (but at least kMinBlockCols columns), so that it stays in
  // the thread's L2 cache while the thread runs every tile against it. 256 float32 columns of K = 2048 (a
  // `base` FFN's second product) are 2 MB: that product ran at 102-104 GFLOP/s against 137-148 in blocks of
  // 64 (bench/decode_gemm.cpp, M = 64 and 128, one thread of an Intel Xeon with 2 MB of L2 per core); the
  // K = 512 products keep their 256 columns. Only where a column's bits do not depend on its block's width
  // (tests/backend/row_invariant_test.cpp): int8, and float32 / bf16 on brgemm (not AVX2's jit gemm).
  static constexpr int64_t kBlockBytes = 512 * 1024;
  static constexpr int kMinBlockCols = 64;
  // oneDNN 2.6 on an AMX Xeon gives a bf16 block of 1 to 32 columns other bits than a wider one (any K; 33 and
  // up agree), so no bf16 block is left that narrow unless the whole product is.
  static constexpr int kNarrowBf16Cols = 32;
  static constexpr int kBrgemmTileRows = 8, kGemmTileRows = 16;  // float32 and bf16 (see above)
  static constexpr int kBrgemmTailRows = 4;  // float32 brgemm: a tail of at most 4 rows runs 4 high
  static constexpr int kTallTileRows = 64;  // int8 and float32 brgemm: these first (see above)
  static constexpr int kInt8MidRows = 16, kInt8TailRows = 4;  // int8, after the tall tiles

  PackedGemm(const dnnl::engine& engine, int threads, const KernelTable& kernels, const KernelContext& ctx)
      : engine_(engine), threads_(threads), kernels_(kernels), ctx_(ctx), store_(std::make_shared<Store>()) {}

  // From now on, the packed and adopted weights are `first`'s (one copy for all decoding workers; both on
  // the process's one CPU engine). Called before this one adopts or packs anything.
  void share_store_of(const PackedGemm& first) { store_ = first.store_; }

  // The largest |quantized weight|: 127 where oneDNN runs VNNI (or AMX) int8 kernels, else 63.
  static int int8_weight_levels();

  // Takes `w` for the weight at `slot` (see above). False where this CPU's int8 products quantize weights to
  // fewer levels than w's (no VNNI): the caller then dequantizes.
  bool adopt(const float* slot, std::shared_ptr<const StoredWeight> w);
  // If the weight at `slot` was adopted: writes its (dequantized) values there and forgets the adoption, so
  // that products of another kind (another precision, a shape oneDNN refuses) can read B. Else nothing.
  void restore(const float* slot);
  void restore_all();
  // Drops what was packed from B's address (every shape and type), so the next product packs it again.
  void forget(const float* B);

  // int8 products on vnni_gemm.h's kernel (by default for K a multiple of 4 up to own_int8_max_k()) or
  // through oneDNN: the same bits either way. Set before the first int8 product (tests compare the two):
  // true runs every K a multiple of 4 on the own kernel (where vnni_gemm_available()), false none.
  void set_own_int8_kernel(bool on) {
    own_int8_max_k_ = on && vnni_gemm_available() ? std::numeric_limits<int>::max() : 0;
  }

  // Returns false (and computes nothing) where oneDNN offers no primitive for the shape.
  bool run(int M, int N, int K, const float* A, int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc,
           Operands type = Operands::f32);

 private:
  struct Int8Columns {  // int8: per column of the block, [width]
    std::vector<float> scales;
    std::vector<int32_t> shift_sums;  // 128 * the sum of its quantized weights: what A's u8 shift adds
  };
  struct Block {
    int c0 = 0, width = 0;
    // Packed [K, width], one copy per layout its kernels ask for: usually one, but int8's 4-row tail can
    // get a VNNI kernel (weights with s8 compensation) where the 16-row tiles get AMX (oneDNN 2.6, Xeon).
    std::vector<dnnl::memory> packed;
    Int8Columns int8;
    std::vector<int8_t> vnni;  // int8 on vnni_gemm.h's kernel instead: its panels (packed stays empty)
  };
  struct Weights {
    std::vector<float> sample;  // the fingerprint
    std::vector<Block> blocks;
  };
  using WeightsKey = std::array<int64_t, 6>;  // address, N, K, ldb, lda, type
  // What the workers share. A product holds its Weights (shared_ptr) while it runs: a re-pack or the
  // cache's bound may drop the map's entry meanwhile.
  struct Store {
    std::mutex mutex;
    std::map<WeightsKey, std::shared_ptr<Weights>> weights;
    std::map<const float*, std::shared_ptr<const StoredWeight>> adopted;  // by the slot's address
  };
  struct Tile {
    int64_t r0;
    int height, rows;  // the kernel's rows; rows of A in it (fewer in a padded tail)
    int slot;          // the index of `height` in its Tiling's heights
  };
  struct Tiling {
    std::vector<int> heights;  // each tile height once, tallest first
    std::vector<Tile> tiles;
  };
  struct Kernel {  // one per (K, width, lda, type, height)
    dnnl::matmul prim;
    dnnl::memory::desc a_md, b_md, c_md;  // b_md: the packed weights' layout
    size_t scratch_bytes = 0;
  };
  using KernelKey = std::array<int64_t, 5>;   // K, width, lda, type, height

  Kernel* kernel(int K, int width, int64_t lda, Operands type, int height);  // null where oneDNN has none
  int block_cols(int N, int K, int64_t lda, Operands type);  // the width of B's column blocks (kBlockBytes)
  Tiling tiling(int M, Operands type) const;
  // The members below that touch store_ expect its mutex held by the caller.
  std::shared_ptr<Weights> weights(const float* B, int N, int K, int64_t ldb, int64_t lda, Operands type);
  static std::vector<float> fingerprint(const float* B, int N, int K, int64_t ldb);
  // Rows [c0, c0 + width) of B as the [K, width] operand in k's layout: from `given` where the weight was
  // adopted, else from B's fp32 values (rounded or quantized here).
  using Given = std::vector<const StoredWeight*>;  // adopted weights covering B's rows in order; empty: none
  // What blocks are packed from: B's values, or the adopted weights' stored values, read once for all the
  // blocks and dropped after. Stored float32 values packed at another precision are gathered into `dense`
  // and rounded or quantized as B's would be.
  struct Source {
    const float* B = nullptr;
    int64_t ldb = 0;
    std::vector<QuantizedWeight> stored;  // in B's row order; empty: pack from B
    std::vector<float> dense;
  };
  static Source source(const float* B, int64_t ldb, const Given& given, Operands type);
  dnnl::memory pack_block(const Kernel& k, const Source& from, int K, int c0, int width, Operands type,
                          Int8Columns& columns);
  // int8: B's rows [c0, c0 + width) quantized (or as adopted), [width, K]; their scales and shift sums.
  std::vector<int8_t> int8_rows(const Source& from, int K, int c0, int width, Int8Columns& columns);
  // An int8 product whose weights were packed for vnni_gemm.h.
  void run_vnni(int M, int K, const float* A, int64_t lda, const Weights& w, float* C, int64_t ldc);
  // The adopted weights that make up B [N, K] for products of `type`; empty if they do not cover it all
  // (then any adopted weight inside B is restored: the product reads B's fp32 values).
  Given given_rows(const float* B, int N, int K, int64_t ldb, Operands type);
  // The index in b.packed of the copy in k's layout, packed now if there is none yet.
  size_t layout_for(Block& b, const Kernel& k, const float* B, const Given& given, int K, int64_t ldb, Operands type);
  void restore_locked(const float* slot);
  void prepare_threads(int nt, size_t scratch_bytes);

  const dnnl::engine& engine_;
  int threads_;
  const KernelTable& kernels_;
  const KernelContext& ctx_;
  std::shared_ptr<Store> store_;
  int own_int8_max_k_ = own_int8_max_k();
  std::map<KernelKey, std::unique_ptr<Kernel>> kernels_by_shape_;  // a null entry: oneDNN refused the shape
  int tile_rows_[2] = {0, 0};            // f32, bf16: decided by the first such kernel oneDNN creates
  static size_t tile_slot(Operands type) { return type == Operands::bf16 ? 1 : 0; }  // its index in tile_rows_
  std::vector<float> tail_a_;            // fp32: the last, partial tile of A padded to a tile (same stride)
  std::vector<uint16_t> bf16_a_;         // bf16: A rounded, [padded rows, K] (padding rows zero)
  std::vector<uint8_t> shifted_a_;       // int8: A quantized + 128, [padded rows, K]
  std::vector<float> a_scales_;          // int8: [padded rows]
  std::vector<std::vector<char>> scratch_;  // per thread
  std::vector<std::vector<float>> tiles_;   // per thread: the dense [height, width] output tile (f32 or s32)
  std::vector<dnnl::stream> streams_;       // per thread
  // Per thread, kept across calls and re-pointed at each tile's data: the oneDNN memory objects of A and C
  // for each kernel (Kernel pointers live as long as this object), the scratch memory over scratch_[t],
  // and the argument map. Made per call, they cost a dozen allocations per product and thread, as much as
  // a decoding step's small products.
  struct ThreadMemories {
    std::map<const Kernel*, std::pair<dnnl::memory, dnnl::memory>> io;
    dnnl::memory scratch;
    std::unordered_map<int, dnnl::memory> args;
  };
  std::vector<ThreadMemories> memories_;
};

}  // namespace tt::backend::cpu
