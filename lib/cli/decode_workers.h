// tt-translate's decoding backends: one per worker (--workers), each set up for the compute type, and
// the rule that picks the number of workers when the user does not.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace tt::cli {

// --workers 0 (the default): one worker per thread (at most kMaxAutoWorkers) for models of d_model <= 256,
// else one. A small model's decode-step products are too small to split across threads (tiny Multi30k
// model, 2 Zen 4 threads: 2 workers of 1 thread 1.84x one worker of 2; `small`, d_model 256: 1.10x,
// +97 MB); a `base` model's split well (1.02x) and a second worker would pack its weights again (+440 MB).
inline constexpr int kMaxAutoWorkers = 8;
int auto_workers(int max_d_model, int threads);

// Worker w's share of `threads` (the first ones take one more of the remainder).
int worker_threads(int w, int workers, int threads);

// --compute-type auto: the fastest type `device` runs at full precision of that type: int8 where its int8
// products keep 8-bit weights (Backend::int8_keeps_8_bits: a CPU with VNNI or AMX), else bf16 where it has
// bf16 products (a GPU from Ampere on), else float32.
std::string fastest_compute_type(const std::string& device);

// A backend on `device` with `threads` threads, batch-invariant where the device can be (*invariant says
// whether it is), products in `compute_type` (float32, int8, bf16). Throws tt::ConfigError naming the
// flag where the device cannot.
std::unique_ptr<backend::Backend> make_decoding_backend(const std::string& device, int threads,
                                                        const std::string& compute_type, bool* invariant = nullptr);

}  // namespace tt::cli
