// Included by the kernel files of one instruction-set variant (compiled with -DTT_CPU_ISA=<name>):
// the kernels of that variant, and the helpers they share (internal linkage: one copy per variant).
#pragma once

#include <algorithm>
#include <cstdint>

#include "backend/cpu/kernels/kernel_table.h"

#ifndef TT_CPU_ISA
#error "kernel files are compiled once per instruction set with -DTT_CPU_ISA=<name> (see lib/CMakeLists.txt)"
#endif

namespace tt::backend::cpu::TT_CPU_ISA {
namespace {

// Threads worth using for `work` elements of cheap streaming work: below ~32k elements a fork/join costs
// more than the loop itself.
inline int threads_for(const KernelContext& ctx, int64_t work) {
  constexpr int64_t kPerThread = 16384;
  const int64_t t = work / kPerThread;
  return static_cast<int>(t < 1 ? 1 : (t < ctx.threads ? t : ctx.threads));
}

inline float* kernel_scratch(const KernelContext& ctx, size_t n) { return ctx.scratch(ctx.owner, n); }

}  // namespace

// This variant's kernels, one per entry of the kernel list (kernel_list.h); each is defined in one kernel file.
#define TT_KERNEL_DECLARATION(ret, name, params) ret name params;
TT_CPU_KERNELS(TT_KERNEL_DECLARATION)
#undef TT_KERNEL_DECLARATION

}  // namespace tt::backend::cpu::TT_CPU_ISA
