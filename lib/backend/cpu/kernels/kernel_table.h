// The CPU backend's loop kernels, compiled once per instruction set (baseline x86-64, AVX2+FMA,
// AVX-512) and chosen at run time by what the processor supports — as oneDNN does for its GEMMs —
// so one binary runs everywhere and uses the best vector unit it finds. Never -march=native.
//
// Each variant lives in its own namespace (cpu::baseline, cpu::avx2, cpu::avx512) and shares no
// symbol with the others: its helpers have internal linkage, and a test checks the objects define no
// weak (shared) symbols a linker could mix up between variants.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/kernels/kernel_list.h"

namespace tt::backend::cpu {

// What a kernel needs from its backend: the thread budget and scratch memory (backend-owned).
struct KernelContext {
  int threads = 1;
  void* owner = nullptr;
  float* (*scratch)(void* owner, size_t n) = nullptr;  // at least n floats, valid until the next call
};

// One instruction set's kernels: a pointer per entry of the kernel list (kernel_list.h).
struct KernelTable {
  const char* isa;
#define TT_KERNEL_POINTER(ret, name, params) ret(*name) params;
  TT_CPU_KERNELS(TT_KERNEL_POINTER)
#undef TT_KERNEL_POINTER
};

namespace baseline { extern const KernelTable kernel_table; }
namespace avx2 { extern const KernelTable kernel_table; }
namespace avx512 { extern const KernelTable kernel_table; }

// "auto": the best the processor supports; or "baseline", "avx2", "avx512" (tests; an unsupported or
// unknown name is a tt::ConfigError).
const KernelTable& select_kernels(const std::string& isa = "auto");
// The instruction sets this processor can run, best last.
std::vector<std::string> supported_isas();

}  // namespace tt::backend::cpu
