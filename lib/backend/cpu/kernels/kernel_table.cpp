// This variant's entry in the run-time dispatch (kernel_table.h): every kernel of the list (kernel_list.h).
#include "backend/cpu/kernels/kernel_functions.h"

namespace tt::backend::cpu::TT_CPU_ISA {

extern const KernelTable kernel_table;
const KernelTable kernel_table{
    .isa = TT_CPU_ISA_NAME,
#define TT_KERNEL_ENTRY(ret, name, params) .name = name,
    TT_CPU_KERNELS(TT_KERNEL_ENTRY)
#undef TT_KERNEL_ENTRY
};

}  // namespace tt::backend::cpu::TT_CPU_ISA
