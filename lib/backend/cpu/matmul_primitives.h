// oneDNN `matmul` primitives cached by key (operand type, shape, strides, alpha, beta), for the fp32
// batched products (gemm.cpp) and the bf16 products (gemm_bf16.cpp) alike: created
// once per key, since creating one costs about as much as running it on attention shapes, then executed
// with the operands' addresses swapped in. A key oneDNN refuses is remembered, and the caller takes its
// fallback. Both maps are bounded (attention shapes vary with the batch's length): full, they start over.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>

namespace tt::backend::cpu {

class MatmulPrimitives {
 public:
  // The operand type (fp32, bf16), trans_a, trans_b, batch1, batch2, M, N, K, alpha and beta bits, the
  // strides (batch1, batch2, ld) of A, B and C.
  enum Operands : int64_t { fp32 = 0, bf16 = 1 };
  using Key = std::array<int64_t, 19>;
  static constexpr size_t kMaxEntries = 1024;  // 512 for each operand type, as when each had its own

  explicit MatmulPrimitives(dnnl::engine& engine) : engine_(engine) {}

  // The primitive of `key`, made now from the descriptors if there is none: C = alpha * A B + beta * C.
  // Null when oneDNN refuses them or, with `no_reference`, offers only its unoptimised reference kernel
  // (the key is then remembered as refused()).
  struct Entry;
  Entry* get(const Key& key, const dnnl::memory::desc& a, const dnnl::memory::desc& b, const dnnl::memory::desc& c,
             float alpha, float beta, bool no_reference = false);
  bool refused(const Key& key) const { return refused_.count(key) > 0; }
  // The primitive of `key` if one was made (null otherwise).
  Entry* find(const Key& key);
  // Runs `e` on these operands (any type the descriptors say) and waits. A oneDNN failure is a
  // tt::InternalError.
  void run(Entry& e, dnnl::stream& stream, const void* a, const void* b, float* c);

  struct Entry {
    dnnl::matmul prim;
    dnnl::memory a, b, c;  // user-pointer memories; the data handles are swapped on every call
    std::unordered_map<int, dnnl::memory> args;  // built once: run() then allocates nothing
  };

 private:
  dnnl::engine& engine_;
  std::map<Key, Entry> entries_;
  std::map<Key, bool> refused_;
};

}  // namespace tt::backend::cpu
