#include "cli/decode_workers.h"

#include <algorithm>

#include "util/error.h"

namespace tt::cli {

int auto_workers(int max_d_model, int threads) { return max_d_model <= 256 ? std::clamp(threads, 1, kMaxAutoWorkers) : 1; }

int worker_threads(int w, int workers, int threads) { return threads / workers + (w < threads % workers ? 1 : 0); }

std::string fastest_compute_type(const std::string& device) {
  auto be = backend::make_backend(device, 1);
  if (be->set_matmul_precision(backend::MatmulPrecision::int8) && be->int8_keeps_8_bits()) return "int8";
  return be->set_matmul_precision(backend::MatmulPrecision::bf16) ? "bf16" : "float32";
}

std::unique_ptr<backend::Backend> make_decoding_backend(const std::string& device, int threads,
                                                        const std::string& compute_type, bool* invariant) {
  auto be = backend::make_backend(device, threads);
  const bool on = be->set_row_invariant(true);
  if (invariant) *invariant = on;
  if (compute_type == "int8" && !be->set_matmul_precision(backend::MatmulPrecision::int8))
    throw ConfigError("--compute-type int8 is not available on " + be->name(), "use --compute-type float32");
  if (compute_type == "bf16" && !be->set_matmul_precision(backend::MatmulPrecision::bf16)) {
    const std::string isa = be->matmul_isa();
    throw ConfigError("--compute-type bf16 is not available on " + be->name() +
                          (isa.empty() ? std::string() : ", oneDNN ISA " + isa + " (a CPU needs AVX512-BF16 or AMX)"),
                      "use --compute-type float32 or int8");
  }
  return be;
}

}  // namespace tt::cli
