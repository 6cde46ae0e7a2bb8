#include "backend/cpu/packed_gemm.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <string>

#include "backend/cpu/vnni_gemm.h"
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

// int8's A goes to oneDNN as u8 = q + 128: u8 x s8 is the form the CPUs multiply (AVX2's vpmaddubsw, VNNI,
// AMX), and oneDNN 2.6 runs s8 x s8 through a slow path on AVX2 (5-90 against 45-180 GOP/s, one thread,
// decode shapes). The shift adds 128 * (sum of the column's weights) to every output, taken off again
// exactly (integers), so the products' bits are those of s8 x s8.
dt a_element_type(PackedGemm::Operands type) {
  return type == PackedGemm::Operands::s8 ? dt::u8 : element_type(type);
}

std::vector<int32_t> shift_sums(const int8_t* rows, int width, int K) {
  std::vector<int32_t> sums(static_cast<size_t>(width));
  for (int n = 0; n < width; ++n) {
    int32_t s = 0;
    for (int k = 0; k < K; ++k) s += rows[static_cast<size_t>(n) * static_cast<size_t>(K) + static_cast<size_t>(k)];
    sums[static_cast<size_t>(n)] = 128 * s;
  }
  return sums;
}

// f(part, row in the part, row in the block) for each of B's rows [c0, c0 + width), held by the adopted
// parts lying one after the other.
template <class F>
void for_each_given_row(const std::vector<QuantizedWeight>& parts, int c0, int width, F&& f) {
  int first = 0;  // B's row where the part starts
  for (const QuantizedWeight& part : parts) {
    for (int r = std::max(first, c0); r < std::min(first + part.N, c0 + width); ++r) f(part, r - first, r - c0);
    first += part.N;
  }
}

// The calling thread's OpenMP thread count is 1 while this lives (restored after, also on an exception).
class OneOpenMpThread {
 public:
  OneOpenMpThread() { omp_set_num_threads(1); }
  ~OneOpenMpThread() { omp_set_num_threads(before_); }
  OneOpenMpThread(const OneOpenMpThread&) = delete;
  OneOpenMpThread& operator=(const OneOpenMpThread&) = delete;

 private:
  const int before_ = omp_get_max_threads();
};

}  // namespace

PackedGemm::Tiling PackedGemm::tiling(int M, Operands type) const {
  const int fixed_rows = tile_rows_[tile_slot(type)];
  const bool brgemm_f32 = type == Operands::f32 && fixed_rows == kBrgemmTileRows;
  // Tallest first; each takes the rows it can, the last also a padded tail.
  const std::vector<int> heights = type == Operands::s8 ? std::vector<int>{kTallTileRows, kInt8MidRows, kInt8TailRows}
                                   : brgemm_f32        ? std::vector<int>{kTallTileRows, kBrgemmTileRows}
                                                       : std::vector<int>{fixed_rows};
  Tiling t;
  auto add = [&t](int64_t r0, int height, int rows) {
    if (t.heights.empty() || t.heights.back() != height) t.heights.push_back(height);
    t.tiles.push_back({r0, height, rows, static_cast<int>(t.heights.size()) - 1});
  };
  int64_t r0 = 0;
  for (int height : heights)
    for (; r0 + height <= M; r0 += height) add(r0, height, height);
  const int tail = brgemm_f32 && M - r0 <= kBrgemmTailRows ? kBrgemmTailRows : heights.back();
  if (r0 < M) add(r0, tail, static_cast<int>(M - r0));
  return t;
}

PackedGemm::Kernel* PackedGemm::kernel(int K, int width, int64_t lda, Operands type, int height) {
  const KernelKey key{K, width, lda, static_cast<int64_t>(type), height};
  auto it = kernels_by_shape_.find(key);
  if (it != kernels_by_shape_.end()) return it->second.get();
  auto k = std::make_unique<Kernel>();
  const bool int8 = type == Operands::s8;
  // int8, bf16: A is converted into a dense buffer (row stride K); int8's accumulators come out as s32.
  k->a_md = type == Operands::f32 ? memory::desc({height, K}, dt::f32, memory::dims{lda, 1})
                                  : memory::desc({height, K}, a_element_type(type), memory::dims{K, 1});
  // A dense output tile: oneDNN's brgemm kernels take no other (a strided one falls back to its gemm).
  k->c_md = memory::desc({height, width}, int8 ? dt::s32 : dt::f32, memory::dims{width, 1});
  const memory::desc b_md({K, width}, element_type(type), memory::format_tag::any);
  try {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per-thread scratchpads: tiles run concurrently
    // Made for the one thread that runs each tile: oneDNN sizes its blocking from the calling thread's OpenMP
    // thread count, and on an AMX Xeon a bf16 K = 2048 block took other bits on a 2-thread backend than on a
    // 1-thread one.
    const OneOpenMpThread one_thread;
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(k->a_md, b_md, k->c_md), attr, engine_);
    k->prim = dnnl::matmul(pd);
    k->scratch_bytes = pd.scratchpad_desc().get_size();
    k->b_md = pd.weights_desc();
    int& fixed_rows = tile_rows_[tile_slot(type)];
    if (!int8 && fixed_rows == 0)
      fixed_rows = std::string(pd.impl_info_str()).rfind("brg", 0) == 0 ? kBrgemmTileRows : kGemmTileRows;
  } catch (const dnnl::error&) {
    k.reset();
  }
  return (kernels_by_shape_[key] = std::move(k)).get();
}

PackedGemm::Source PackedGemm::source(const float* B, int64_t ldb, const Given& given, Operands type) {
  Source from{B, ldb, {}, {}};
  for (const StoredWeight* part : given) from.stored.push_back(part->read());
  if (from.stored.empty() || type == Operands::f32 || from.stored.front().type != MatmulPrecision::fp32) return from;
  if (from.stored.size() == 1) {
    from.dense = std::move(from.stored.front().f32);  // one part: no copy
  } else {
    for (const QuantizedWeight& part : from.stored) from.dense.insert(from.dense.end(), part.f32.begin(), part.f32.end());
  }
  from.stored.clear();
  from.B = from.dense.data();
  from.ldb = given.front()->K;
  return from;
}

std::vector<int8_t> PackedGemm::int8_rows(const Source& from, int K, int c0, int width, Int8Columns& columns) {
  std::vector<int8_t> rows(static_cast<size_t>(width) * static_cast<size_t>(K));
  columns.scales.resize(static_cast<size_t>(width));
  if (!from.stored.empty()) {  // the block's rows gathered from the adopted weights that hold them
    const auto k = static_cast<size_t>(K);
    for_each_given_row(from.stored, c0, width, [&](const QuantizedWeight& part, int in_part, int in_block) {
      std::memcpy(rows.data() + static_cast<size_t>(in_block) * k, part.s8.data() + static_cast<size_t>(in_part) * k,
                  k);
      columns.scales[static_cast<size_t>(in_block)] = part.scales[static_cast<size_t>(in_part)];
    });
  } else {
    kernels_.quantize_rows_s8(ctx_, rows.data(), columns.scales.data(), from.B + c0 * from.ldb, width, K, from.ldb,
                              int8_weight_levels(), false);
  }
  columns.shift_sums = shift_sums(rows.data(), width, K);
  return rows;
}

memory PackedGemm::pack_block(const Kernel& k, const Source& from, int K, int c0, int width, Operands type,
                              Int8Columns& columns) {
  dnnl::stream stream(engine_);
  memory packed(k.b_md, engine_);
  auto reorder = [&](dt t, const void* rows, int64_t ld) {  // rows: block row 0 of B, row stride ld
    memory user(memory::desc({K, width}, t, memory::dims{1, ld}), engine_, const_cast<void*>(rows));
    dnnl::reorder(user, packed).execute(stream, user, packed);
    stream.wait();  // the source may be freed on return
  };
  const std::vector<QuantizedWeight>& given = from.stored;
  const float* B = from.B;
  const int64_t ldb = from.ldb;
  if (type == Operands::s8) {
    reorder(dt::s8, int8_rows(from, K, c0, width, columns).data(), K);
  } else if (!given.empty()) {  // the block's rows gathered from the adopted weights that hold them
    const size_t row_bytes = static_cast<size_t>(K) * (type == Operands::bf16 ? 2 : 4);
    std::vector<char> rows(static_cast<size_t>(width) * row_bytes);
    for_each_given_row(given, c0, width, [&](const QuantizedWeight& part, int in_part, int in_block) {
      const size_t at = static_cast<size_t>(in_part) * static_cast<size_t>(K);
      const void* src = type == Operands::bf16 ? static_cast<const void*>(part.bf16.data() + at)
                                               : static_cast<const void*>(part.f32.data() + at);
      std::memcpy(rows.data() + static_cast<size_t>(in_block) * row_bytes, src, row_bytes);
    });
    reorder(element_type(type), rows.data(), K);
  } else if (type == Operands::f32) {
    reorder(dt::f32, B + c0 * ldb, ldb);
  } else {  // bf16, rounded here, by tt's kernel: the same rounding as A's
    std::vector<uint16_t> b(static_cast<size_t>(width) * K);
    kernels_.convert_to_bf16(ctx_, b.data(), B + c0 * ldb, 1, 1, width, K, MatrixStrides{0, 0, ldb});
    reorder(dt::bf16, b.data(), K);
  }
  return packed;
}

bool PackedGemm::adopt(const float* slot, std::shared_ptr<const StoredWeight> w) {
  if (w->type == MatmulPrecision::int8 && int8_weight_levels() != QuantizedWeight::kInt8Levels) return false;
  const std::lock_guard<std::mutex> lock(store_->mutex);
  store_->adopted[slot] = std::move(w);
  return true;
}

void PackedGemm::restore(const float* slot) {
  const std::lock_guard<std::mutex> lock(store_->mutex);
  restore_locked(slot);
}

void PackedGemm::forget(const float* B) {
  const std::lock_guard<std::mutex> lock(store_->mutex);
  const auto address = static_cast<int64_t>(reinterpret_cast<uintptr_t>(B));
  auto& cache = store_->weights;
  for (auto it = cache.begin(); it != cache.end();) it = it->first[0] == address ? cache.erase(it) : std::next(it);
}

void PackedGemm::restore_locked(const float* slot) {
  auto& adopted = store_->adopted;
  const auto it = adopted.find(slot);
  if (it == adopted.end()) return;
  it->second->read().dequantize(const_cast<float*>(slot), it->second->K);  // the weight's own (writable) slot
  adopted.erase(it);
  // Whatever was packed from the given values over these rows is packed from B's values from now on.
  const auto at = reinterpret_cast<uintptr_t>(slot);
  auto& weights = store_->weights;
  for (auto w = weights.begin(); w != weights.end();) {
    const auto& key = w->first;  // address, N, K, ldb, ...
    const auto begin = static_cast<uintptr_t>(key[0]), end = begin + static_cast<uintptr_t>(key[1] * key[3]) * sizeof(float);
    w = at >= begin && at < end ? weights.erase(w) : std::next(w);
  }
}

void PackedGemm::restore_all() {
  const std::lock_guard<std::mutex> lock(store_->mutex);
  while (!store_->adopted.empty()) restore_locked(store_->adopted.begin()->first);
}

PackedGemm::Given PackedGemm::given_rows(const float* B, int N, int K, int64_t ldb, Operands type) {
  const auto& adopted = store_->adopted;
  if (adopted.empty()) return {};
  const MatmulPrecision want = type == Operands::s8     ? MatmulPrecision::int8
                               : type == Operands::bf16 ? MatmulPrecision::bf16
                                                        : MatmulPrecision::fp32;
  Given parts;
  int covered = 0;
  while (covered < N && ldb == K) {
    const auto it = adopted.find(B + int64_t{covered} * K);
    const StoredWeight* w = it == adopted.end() ? nullptr : it->second.get();
    const bool packable = w && w->K == K && (w->type == want || w->type == MatmulPrecision::fp32) &&
                          (parts.empty() || w->type == parts.front()->type) && covered + w->N <= N;
    if (!packable) break;
    parts.push_back(it->second.get());
    covered += it->second->N;
  }
  if (covered == N) return parts;
  const float* end = B + int64_t{N} * ldb;
  std::vector<const float*> inside;
  for (const auto& [slot, w] : adopted)
    if (slot >= B && slot < end) inside.push_back(slot);
  for (const float* slot : inside) restore_locked(slot);
  return {};
}

int PackedGemm::block_cols(int N, int K, int64_t lda, Operands type) {
  const int64_t bytes = type == Operands::f32 ? 4 : type == Operands::bf16 ? 2 : 1;
  const int64_t fit = kBlockBytes / (bytes * std::max(K, 1)) / kMinBlockCols * kMinBlockCols;
  const int cols = static_cast<int>(std::clamp<int64_t>(fit, kMinBlockCols, kWideBlockCols));
  // Blocks of another width change no bits where the sums are exact (int8) or oneDNN runs brgemm (its tile
  // height): its jit gemm (AVX2) gives a column other bits in a block of another width, so keeps kBlockCols.
  if (type != Operands::s8 &&
      (!kernel(K, std::min(N, cols), lda, type, kTallTileRows) || tile_rows_[tile_slot(type)] != kBrgemmTileRows))
    return kBlockCols;
  return cols;
}

std::shared_ptr<PackedGemm::Weights> PackedGemm::weights(const float* B, int N, int K, int64_t ldb, int64_t lda,
                                                        Operands type) {
  // The packed layout is the one the kernel wants, which may depend on the strides.
  const WeightsKey key{static_cast<int64_t>(reinterpret_cast<uintptr_t>(B)), N, K, ldb, lda, static_cast<int64_t>(type)};
  const Given given = given_rows(B, N, K, ldb, type);
  std::vector<float> sample;
  if (given.empty()) sample = fingerprint(B, N, K, ldb);  // B's values: never read for adopted weights
  auto& cache = store_->weights;
  auto it = cache.find(key);
  if (it != cache.end() &&
      (!given.empty() || std::memcmp(it->second->sample.data(), sample.data(), sample.size() * sizeof(float)) == 0))
    return it->second;
  auto packed = std::make_shared<Weights>();
  Weights& w = *packed;
  w.sample = std::move(sample);
  const Source from = source(B, ldb, given, type);
  const int block_cols = this->block_cols(N, K, lda, type);
  const bool vnni = type == Operands::s8 && K <= own_int8_max_k_ && K % 4 == 0;
  for (int c0 = 0; c0 < N;) {
    int width = std::min(block_cols, N - c0);
    // bf16: a block of at most kNarrowBf16Cols columns runs another oneDNN kernel on AMX (its columns get other
    // bits than in a wider block), so a narrow tail joins the block before it.
    if (type == Operands::bf16 && N - c0 - width <= kNarrowBf16Cols) width = N - c0;
    Block b{c0, width, {}, {}, {}};
    if (vnni) {
      b.vnni = pack_vnni_panels(int8_rows(from, K, c0, width, b.int8).data(), width, K);
    } else {
      Kernel* k = kernel(K, width, lda, type, kTallTileRows);  // the main tiles' layout (layout_for adds others)
      if (!k) return nullptr;
      b.packed.push_back(pack_block(*k, from, K, c0, width, type, b.int8));
    }
    w.blocks.push_back(std::move(b));
    c0 += width;
  }
  if (cache.size() >= 1024) cache.clear();  // bound the cache (a model has a few hundred matrices)
  return cache[key] = std::move(packed);
}

size_t PackedGemm::layout_for(Block& b, const Kernel& k, const float* B, const Given& given, int K, int64_t ldb,
                              Operands type) {
  for (size_t i = 0; i < b.packed.size(); ++i)
    if (b.packed[i].get_desc() == k.b_md) return i;
  Int8Columns columns;  // the same quantization as the first copy's
  b.packed.push_back(pack_block(k, source(B, ldb, given, type), K, b.c0, b.width, type, columns));
  return b.packed.size() - 1;
}

void PackedGemm::prepare_threads(int nt, size_t scratch_bytes) {
  if (static_cast<int>(streams_.size()) < nt) {
    streams_.clear();
    for (int t = 0; t < nt; ++t) streams_.emplace_back(engine_);
    scratch_.resize(static_cast<size_t>(nt));
    tiles_.resize(static_cast<size_t>(nt));
    memories_.resize(static_cast<size_t>(nt));
  }
  for (int t = 0; t < nt; ++t) {
    if (scratch_[static_cast<size_t>(t)].size() < scratch_bytes) scratch_[static_cast<size_t>(t)].resize(scratch_bytes);
    const int widest = std::max(kBlockCols, kWideBlockCols);  // f32 or s32 tiles: 4 bytes an element
    tiles_[static_cast<size_t>(t)].resize(static_cast<size_t>(std::max(kGemmTileRows, kTallTileRows)) * widest);
  }
}

bool PackedGemm::run(int M, int N, int K, const float* A, int64_t lda, const float* B, int64_t ldb, float* C,
                     int64_t ldc, Operands type) {
  const bool int8 = type == Operands::s8;
  std::vector<Kernel*> kernels;  // [block][tile slot]: the block's kernel for each of the tiling's heights
  std::vector<memory> operands;  // indexed like kernels: the packed copy that kernel reads (a handle)
  std::shared_ptr<const Weights> w;
  Tiling tiling;
  {  // the store's part, under its lock; the product below runs on handles of its own
    const std::lock_guard<std::mutex> lock(store_->mutex);
    std::shared_ptr<Weights> found = weights(B, N, K, ldb, lda, type);
    if (!found || found->blocks.empty()) return false;  // empty: N == 0, nothing to pack
    if (found->blocks.front().vnni.empty()) {  // else packed for vnni_gemm.h: no oneDNN kernels
      // The first kernel this PackedGemm makes decides its tile height (another worker may have packed the
      // weights, making none here).
      if (!kernel(K, found->blocks.front().width, lda, type, kTallTileRows)) return false;
      tiling = this->tiling(M, type);
      const Given given = given_rows(B, N, K, ldb, type);
      for (Block& b : found->blocks)
        for (int height : tiling.heights) {
          kernels.push_back(kernel(K, b.width, lda, type, height));
          if (!kernels.back()) return false;
          operands.push_back(b.packed[layout_for(b, *kernels.back(), B, given, K, ldb, type)]);
        }
    }
    w = std::move(found);
  }
  if (kernels.empty()) {
    run_vnni(M, K, A, lda, *w, C, ldc);
    return true;
  }
  const std::vector<Tile>& tiles = tiling.tiles;
  const int64_t padded_rows = tiles.back().r0 + tiles.back().height;
  const Tile& last = tiles.back();
  if (int8) {  // every row quantized once, shifted to u8; the last tile's padding rows are u8 zeros (never read back)
    shifted_a_.resize(static_cast<size_t>(padded_rows) * K);
    a_scales_.assign(static_cast<size_t>(padded_rows), 0.0f);
    std::fill(shifted_a_.begin() + static_cast<ptrdiff_t>(M) * K, shifted_a_.end(), uint8_t{0});
    kernels_.quantize_rows_s8(ctx_, reinterpret_cast<int8_t*>(shifted_a_.data()), a_scales_.data(), A, M, K, lda, 127,
                              true);
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
      ThreadMemories& mem = memories_[static_cast<size_t>(t)];
      std::vector<char>& scratch_buffer = scratch_[static_cast<size_t>(t)];
      if (scratch_bytes > 0 && (!mem.scratch || mem.scratch.get_data_handle() != scratch_buffer.data() ||
                                mem.scratch.get_desc().get_size() < scratch_bytes))
        mem.scratch = memory(memory::desc({static_cast<int64_t>(scratch_buffer.size())}, dt::u8, memory::dims{1}),
                             engine_, scratch_buffer.data());
      float* c = tiles_[static_cast<size_t>(t)].data();
      Kernel* bound = nullptr;  // what args are set up for: this kernel on block bound_block's weights
      size_t bound_block = SIZE_MAX;
      memory am, cm;
      std::unordered_map<int, memory>& args = mem.args;
#pragma omp for schedule(static)
      for (int item = 0; item < items; ++item) {
        const size_t bi = static_cast<size_t>(item / n_tiles);
        const Tile& tile = tiles[static_cast<size_t>(item % n_tiles)];
        const Block& b = w->blocks[bi];
        const size_t ki = tiling.heights.size() * bi + static_cast<size_t>(tile.slot);
        Kernel* k = kernels[ki];
        if (k != bound || bi != bound_block) {
          auto [io, made] = mem.io.try_emplace(k);
          if (made) io->second = {memory(k->a_md, engine_, nullptr), memory(k->c_md, engine_, nullptr)};
          am = io->second.first;
          cm = io->second.second;
          args[DNNL_ARG_SRC] = am;
          args[DNNL_ARG_WEIGHTS] = operands[ki];
          args[DNNL_ARG_DST] = cm;
          if (scratch_bytes > 0) args[DNNL_ARG_SCRATCHPAD] = mem.scratch;
          else args.erase(DNNL_ARG_SCRATCHPAD);
          bound = k;
          bound_block = bi;
        }
        const bool padded = tile.rows < tile.height;
        const int64_t r0 = tile.r0;
        void* a = int8                    ? static_cast<void*>(shifted_a_.data() + r0 * K)
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
                                  b.int8.shift_sums.data(), a_scales_.data() + r0, b.int8.scales.data());
        } else {
          for (int i = 0; i < rows; ++i)
            std::memcpy(C + (r0 + i) * ldc + b.c0, c + static_cast<size_t>(i) * b.width,
                        sizeof(float) * static_cast<size_t>(b.width));
        }
      }
      args[DNNL_ARG_WEIGHTS] = memory();  // a packed block dropped from the store is not kept alive here
    } catch (const dnnl::error& e) {
#pragma omp critical(tt_packed_gemm)
      failure = e.what();
    }
  }
  if (!failure.empty()) throw InternalError("oneDNN matmul (packed weights) failed: " + failure);
  return true;
}

void PackedGemm::run_vnni(int M, int K, const float* A, int64_t lda, const Weights& w, float* C, int64_t ldc) {
  shifted_a_.resize(static_cast<size_t>(M) * static_cast<size_t>(K));
  a_scales_.resize(static_cast<size_t>(M));
  kernels_.quantize_rows_s8(ctx_, reinterpret_cast<int8_t*>(shifted_a_.data()), a_scales_.data(), A, M, K, lda, 127,
                            true);
  // Items of up to kTallTileRows rows by one block, block-major as run()'s tiles (no tile buffer: the sums
  // are dequantized into C from registers). Where that leaves a thread without an item (a short batch
  // against a narrow product: a beam of 4 rows, one block), each block's panels are split between items too.
  const int chunks = (M + kTallTileRows - 1) / kTallTileRows, blocks = static_cast<int>(w.blocks.size());
  const int panels = (w.blocks.front().width + kVnniPanelCols - 1) / kVnniPanelCols;  // the widest block's
  const int parts = std::clamp((threads_ + chunks * blocks - 1) / (chunks * blocks), 1, panels);
  const int items = chunks * blocks * parts;
  const int nt = std::max(1, std::min(threads_, items));
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int item = 0; item < items; ++item) {
    const Block& b = w.blocks[static_cast<size_t>(item / (chunks * parts))];
    const int r0 = item / parts % chunks * kTallTileRows, part = item % parts;
    const int in_block = (b.width + kVnniPanelCols - 1) / kVnniPanelCols;  // the block's panels, split in parts
    const int c0 = in_block * part / parts * kVnniPanelCols;
    const int c1 = std::min(b.width, in_block * (part + 1) / parts * kVnniPanelCols);
    if (c0 >= c1) continue;
    vnni_gemm_dequant(C + int64_t{r0} * ldc + b.c0 + c0, ldc, shifted_a_.data() + static_cast<size_t>(r0) * K,
                      std::min(kTallTileRows, M - r0), K, b.vnni.data() + static_cast<size_t>(c0) * K, c1 - c0,
                      b.int8.shift_sums.data() + c0, a_scales_.data() + r0, b.int8.scales.data() + c0);
  }
}

}  // namespace tt::backend::cpu
