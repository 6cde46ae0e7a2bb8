#include "backend/cpu/packed_gemm.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <string>

#include "util/error.h"

namespace tt::backend::cpu {

using dnnl::memory;
using dt = memory::data_type;

int PackedGemm::int8_weight_levels() {
  const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const auto avx512_vnni = static_cast<unsigned>(dnnl_cpu_isa_avx512_core_vnni);
  const auto avx2_vnni = static_cast<unsigned>(dnnl_cpu_isa_avx2_vnni);
  return (isa & avx512_vnni) == avx512_vnni || (isa & avx2_vnni) == avx2_vnni ? 127 : 63;
}

std::vector<float> PackedGemm::fingerprint(const float* B, int N, int K, int64_t ldb) {
  constexpr int kSamples = 64;
  std::vector<float> s(kSamples);
  const int64_t total = int64_t{N} * K;
  for (int i = 0; i < kSamples; ++i) {
    const int64_t e = (total - 1) * i / (kSamples - 1);  // first and last element included
    s[static_cast<size_t>(i)] = B[(e / K) * ldb + e % K];
  }
  return s;
}

namespace {

dt element_type(PackedGemm::Operands type) {
  return type == PackedGemm::Operands::s8 ? dt::s8 : type == PackedGemm::Operands::bf16 ? dt::bf16 : dt::f32;
}

}  // namespace

std::vector<PackedGemm::Tile> PackedGemm::tiling(int M, Operands type) const {
  std::vector<Tile> tiles;
  const bool int8 = type == Operands::s8;
  const int fixed_rows = tile_rows_[type == Operands::bf16 ? 1 : 0];
  const int main_rows = int8 ? kInt8TileRows : fixed_rows;
  int64_t r0 = 0;
  for (; r0 + main_rows <= M; r0 += main_rows) tiles.push_back({r0, main_rows, main_rows});
  const int tail_rows = int8 ? kInt8TailRows : fixed_rows;
  for (; r0 < M; r0 += tail_rows) tiles.push_back({r0, tail_rows, static_cast<int>(std::min<int64_t>(tail_rows, M - r0))});
  return tiles;
}

PackedGemm::Kernel* PackedGemm::kernel(int K, int width, int64_t lda, Operands type, int height) {
  const KernelKey key{K, width, lda, static_cast<int64_t>(type), height};
  auto it = kernels_by_shape_.find(key);
  if (it != kernels_by_shape_.end()) return it->second.get();
  auto k = std::make_unique<Kernel>();
  const bool int8 = type == Operands::s8;
  // int8, bf16: A is converted into a dense buffer (row stride K); int8's accumulators come out as s32.
  k->a_md = type == Operands::f32 ? memory::desc({height, K}, dt::f32, memory::dims{lda, 1})
                                  : memory::desc({height, K}, element_type(type), memory::dims{K, 1});
  // A dense output tile: oneDNN's brgemm kernels take no other (a strided one falls back to its gemm).
  k->c_md = memory::desc({height, width}, int8 ? dt::s32 : dt::f32, memory::dims{width, 1});
  const memory::desc b_md({K, width}, element_type(type), memory::format_tag::any);
  try {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per-thread scratchpads: tiles run concurrently
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(k->a_md, b_md, k->c_md), attr, engine_);
    k->prim = dnnl::matmul(pd);
    k->scratch_bytes = pd.scratchpad_desc().get_size();
    k->b_md = pd.weights_desc();
    int& fixed_rows = tile_rows_[type == Operands::bf16 ? 1 : 0];
    if (!int8 && fixed_rows == 0)
      fixed_rows = std::string(pd.impl_info_str()).rfind("brg", 0) == 0 ? kBrgemmTileRows : kGemmTileRows;
  } catch (const dnnl::error&) {
    k.reset();
  }
  return (kernels_by_shape_[key] = std::move(k)).get();
}

// Block [c0, c0 + width) of B [N, K] (its rows), as the [K, width] operand in the kernel's layout.
memory PackedGemm::pack_block(const Kernel& k, const float* B, int K, int width, int64_t ldb, Operands type,
                              std::vector<float>& scales) {
  dnnl::stream stream(engine_);
  memory packed(k.b_md, engine_);
  if (type == Operands::f32) {
    memory user(memory::desc({K, width}, dt::f32, memory::dims{1, ldb}), engine_, const_cast<float*>(B));
    dnnl::reorder(user, packed).execute(stream, user, packed);
  } else if (type == Operands::bf16) {  // rounded here, by tt's kernel: the same rounding as A's
    std::vector<uint16_t> b(static_cast<size_t>(width) * K);
    kernels_.convert_to_bf16(ctx_, b.data(), B, 1, 1, width, K, MatrixStrides{0, 0, ldb});
    memory user(memory::desc({K, width}, dt::bf16, memory::dims{1, K}), engine_, b.data());
    dnnl::reorder(user, packed).execute(stream, user, packed);
    stream.wait();  // b is freed on return
  } else {
    std::vector<int8_t> q(static_cast<size_t>(width) * K);
    scales.resize(static_cast<size_t>(width));
    kernels_.quantize_rows_s8(ctx_, q.data(), scales.data(), B, width, K, ldb, int8_weight_levels());
    memory user(memory::desc({K, width}, dt::s8, memory::dims{1, K}), engine_, q.data());
    dnnl::reorder(user, packed).execute(stream, user, packed);
    stream.wait();  // q is freed on return
  }
  stream.wait();
  return packed;
}

PackedGemm::Weights* PackedGemm::weights(const float* B, int N, int K, int64_t ldb, int64_t lda, Operands type) {
  // The packed layout is the one the kernel wants, which may depend on the strides.
  const WeightsKey key{static_cast<int64_t>(reinterpret_cast<uintptr_t>(B)), N, K, ldb, lda, static_cast<int64_t>(type)};
  std::vector<float> sample = fingerprint(B, N, K, ldb);
  auto it = weights_.find(key);
  if (it != weights_.end() && std::memcmp(it->second.sample.data(), sample.data(), sample.size() * sizeof(float)) == 0)
    return &it->second;
  Weights w;
  w.sample = std::move(sample);
  for (int c0 = 0; c0 < N; c0 += kBlockCols) {
    const int width = std::min(kBlockCols, N - c0);
    Kernel* k = kernel(K, width, lda, type, kInt8TileRows);  // the main tiles' layout (layout_for adds others)
    if (!k) return nullptr;
    Block b{c0, width, {}, {}};
    b.packed.push_back(pack_block(*k, B + c0 * ldb, K, width, ldb, type, b.scales));
    w.blocks.push_back(std::move(b));
  }
  if (weights_.size() >= 1024) weights_.clear();  // bound the cache (a model has a few hundred matrices)
  return &(weights_[key] = std::move(w));
}

size_t PackedGemm::layout_for(Block& b, const Kernel& k, const float* B, int K, int64_t ldb, Operands type) {
  for (size_t i = 0; i < b.packed.size(); ++i)
    if (b.packed[i].get_desc() == k.b_md) return i;
  std::vector<float> scales;  // the same quantization as the first copy's
  b.packed.push_back(pack_block(k, B + b.c0 * ldb, K, b.width, ldb, type, scales));
  return b.packed.size() - 1;
}

void PackedGemm::prepare_threads(int nt, size_t scratch_bytes) {
  if (static_cast<int>(streams_.size()) < nt) {
    streams_.clear();
    for (int t = 0; t < nt; ++t) streams_.emplace_back(engine_);
    scratch_.resize(static_cast<size_t>(nt));
    tiles_.resize(static_cast<size_t>(nt));
  }
  for (int t = 0; t < nt; ++t) {
    if (scratch_[static_cast<size_t>(t)].size() < scratch_bytes) scratch_[static_cast<size_t>(t)].resize(scratch_bytes);
    tiles_[static_cast<size_t>(t)].resize(static_cast<size_t>(kGemmTileRows) * kBlockCols);  // f32, s32: 4 bytes
  }
}

bool PackedGemm::run(int M, int N, int K, const float* A, int64_t lda, const float* B, int64_t ldb, float* C,
                     int64_t ldc, Operands type) {
  const bool int8 = type == Operands::s8;
  Weights* w = weights(B, N, K, ldb, lda, type);
  if (!w) return false;
  const std::vector<Tile> tiles = tiling(M, type);
  const int heights[2] = {tiles.front().height, tiles.back().height};
  std::vector<Kernel*> kernels;  // [block][0: main height, 1: tail height]
  std::vector<size_t> layouts;   // indexed like kernels: the copy in b.packed that kernel reads
  for (Block& b : w->blocks)
    for (int height : heights) {
      kernels.push_back(kernel(K, b.width, lda, type, height));
      if (!kernels.back()) return false;
      layouts.push_back(layout_for(b, *kernels.back(), B, K, ldb, type));
    }
  const int64_t padded_rows = tiles.back().r0 + tiles.back().height;
  const Tile& last = tiles.back();
  if (int8) {  // every row quantized once; the padding rows of the last tile are zero
    quantized_a_.resize(static_cast<size_t>(padded_rows) * K);
    a_scales_.assign(static_cast<size_t>(padded_rows), 0.0f);
    std::fill(quantized_a_.begin() + static_cast<ptrdiff_t>(M) * K, quantized_a_.end(), int8_t{0});
    kernels_.quantize_rows_s8(ctx_, quantized_a_.data(), a_scales_.data(), A, M, K, lda, 127);
  } else if (type == Operands::bf16) {  // every row rounded once; the padding rows of the last tile are zero
    bf16_a_.resize(static_cast<size_t>(padded_rows) * K);
    std::fill(bf16_a_.begin() + static_cast<ptrdiff_t>(M) * K, bf16_a_.end(), uint16_t{0});
    kernels_.convert_to_bf16(ctx_, bf16_a_.data(), A, 1, 1, M, K, MatrixStrides{0, 0, lda});
  } else if (last.rows < last.height) {  // the last tile, padded with zero rows, at the same stride
    tail_a_.assign(static_cast<size_t>(last.height) * lda, 0.0f);
    for (int i = 0; i < last.rows; ++i)
      std::memcpy(tail_a_.data() + i * lda, A + (last.r0 + i) * lda, sizeof(float) * K);
  }
  const int n_tiles = static_cast<int>(tiles.size());
  const int items = n_tiles * static_cast<int>(w->blocks.size());
  const int nt = std::max(1, std::min(threads_, items));
  size_t scratch_bytes = 0;
  for (Kernel* k : kernels) scratch_bytes = std::max(scratch_bytes, k->scratch_bytes);
  prepare_threads(nt, scratch_bytes);

  std::string failure;
  // Block-major: consecutive items share a weight block, and a static schedule gives each thread a run of
  // them. oneDNN runs a primitive single-threaded inside a parallel region.
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num();
    try {
      // One set of memory objects per thread and kernel, re-pointed per tile (creating them per tile cost
      // about as much as a small tile's product).
      memory scratch;
      if (scratch_bytes > 0)
        scratch = memory(memory::desc({static_cast<int64_t>(scratch_bytes)}, dt::u8, memory::dims{1}), engine_,
                         scratch_[static_cast<size_t>(t)].data());
      float* c = tiles_[static_cast<size_t>(t)].data();
      Kernel* bound = nullptr;  // what args are set up for: this kernel on block bound_block's weights
      size_t bound_block = SIZE_MAX;
      memory am, cm;
      std::unordered_map<int, memory> args;
#pragma omp for schedule(static)
      for (int item = 0; item < items; ++item) {
        const size_t bi = static_cast<size_t>(item / n_tiles);
        const Tile& tile = tiles[static_cast<size_t>(item % n_tiles)];
        const Block& b = w->blocks[bi];
        const size_t ki = 2 * bi + (tile.height == heights[0] ? 0 : 1);
        Kernel* k = kernels[ki];
        if (k != bound || bi != bound_block) {
          am = memory(k->a_md, engine_, nullptr);
          cm = memory(k->c_md, engine_, c);
          args = {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, b.packed[layouts[ki]]}, {DNNL_ARG_DST, cm}};
          if (scratch_bytes > 0) args.emplace(DNNL_ARG_SCRATCHPAD, scratch);
          bound = k;
          bound_block = bi;
        }
        const bool padded = tile.rows < tile.height;
        const int64_t r0 = tile.r0;
        void* a = int8                    ? static_cast<void*>(quantized_a_.data() + r0 * K)
                  : type == Operands::bf16 ? static_cast<void*>(bf16_a_.data() + r0 * K)
                                           : const_cast<float*>(padded ? tail_a_.data() : A + r0 * lda);
        am.set_data_handle(a);
        // A whole tile of a one-block product whose rows are dense in C (ldc == width) goes straight there.
        const bool direct = !int8 && !padded && ldc == b.width;
        cm.set_data_handle(direct ? static_cast<void*>(C + r0 * ldc) : static_cast<void*>(c));
        k->prim.execute(streams_[static_cast<size_t>(t)], args);
        streams_[static_cast<size_t>(t)].wait();
        const int rows = tile.rows;
        if (direct) continue;
        if (int8) {
          kernels_.dequantize_s32(ctx_, C + r0 * ldc + b.c0, ldc, reinterpret_cast<const int32_t*>(c), rows, b.width,
                                  a_scales_.data() + r0, b.scales.data());
        } else {
          for (int i = 0; i < rows; ++i)
            std::memcpy(C + (r0 + i) * ldc + b.c0, c + static_cast<size_t>(i) * b.width,
                        sizeof(float) * static_cast<size_t>(b.width));
        }
      }
    } catch (const dnnl::error& e) {
#pragma omp critical(tt_packed_gemm)
      failure = e.what();
    }
  }
  if (!failure.empty()) throw InternalError("oneDNN matmul (packed weights) failed: " + failure);
  return true;
}

}  // namespace tt::backend::cpu
