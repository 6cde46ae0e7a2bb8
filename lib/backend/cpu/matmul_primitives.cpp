#include "backend/cpu/matmul_primitives.h"

#include <string>

#include "util/error.h"

namespace tt::backend::cpu {

MatmulPrimitives::Entry* MatmulPrimitives::find(const Key& key) {
  const auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

MatmulPrimitives::Entry* MatmulPrimitives::get(const Key& key, const dnnl::memory::desc& a,
                                               const dnnl::memory::desc& b, const dnnl::memory::desc& c, float alpha,
                                               float beta, bool no_reference) {
  if (Entry* e = find(key)) return e;
  if (refused(key)) return nullptr;
  try {
    dnnl::primitive_attr attr;
    if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
    if (beta != 0.0f) {
      dnnl::post_ops ops;
      ops.append_sum(beta);
      attr.set_post_ops(ops);
    }
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, engine_);
    if (no_reference && std::string(pd.impl_info_str()).rfind("ref", 0) == 0)
      throw dnnl::error(dnnl_unimplemented, "ref");
    if (entries_.size() >= kMaxEntries) entries_.clear();
    using dnnl::memory;
    Entry e{dnnl::matmul(pd), memory(a, engine_, nullptr), memory(b, engine_, nullptr), memory(c, engine_, nullptr),
            {}};
    e.args = {{DNNL_ARG_SRC, e.a}, {DNNL_ARG_WEIGHTS, e.b}, {DNNL_ARG_DST, e.c}};  // handles shared with e.a/b/c
    return &entries_.emplace(key, std::move(e)).first->second;
  } catch (const dnnl::error&) {
    if (refused_.size() >= kMaxEntries) refused_.clear();
    refused_.emplace(key, true);
    return nullptr;
  }
}

void MatmulPrimitives::run(Entry& e, dnnl::stream& stream, const void* a, const void* b, float* c) {
  try {
    e.a.set_data_handle(const_cast<void*>(a));
    e.b.set_data_handle(const_cast<void*>(b));
    e.c.set_data_handle(c);
    e.prim.execute(stream, e.args);
    stream.wait();
  } catch (const dnnl::error& err) {
    throw InternalError(std::string("oneDNN matmul failed: ") + err.what() + " (status " +
                        std::to_string(static_cast<int>(err.status)) + ")");
  }
}

}  // namespace tt::backend::cpu
