#include "train/precision.h"

#include "util/error.h"

namespace tt::train {

std::string resolve_precision(backend::Backend& backend, const std::string& requested) {
  if (requested != "auto") return requested;
  const backend::MatmulPrecision before = backend.matmul_precision();
  const bool bf16 = backend.set_matmul_precision(backend::MatmulPrecision::bf16);
  backend.set_matmul_precision(before);
  return bf16 ? "bf16" : "fp32";
}

std::string use_precision(backend::Backend& backend, const std::string& precision) {
  const bool bf16 = precision == "bf16";
  if (bf16 && !backend.set_matmul_precision(backend::MatmulPrecision::bf16))
    throw Error(option_ref("precision") + " bf16 is not available on " + backend.name() +
                (backend.matmul_isa().empty() ? std::string() : ", oneDNN ISA " + backend.matmul_isa()) +
                " (a CPU needs AVX512-BF16 or AMX): use " + option_ref("precision") + " fp32");
  const std::string isa = backend.matmul_isa();
  return precision + " matmuls" + (isa.empty() ? "" : " (oneDNN " + isa + ")");
}

}  // namespace tt::train
