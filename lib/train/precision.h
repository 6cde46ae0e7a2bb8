// The precision of training's matrix products. bf16 operands with fp32 accumulation need bf16
// instructions (oneDNN's effective ISA avx512_core_bf16 or AMX on a CPU); without them training is
// refused rather than silently run in fp32; "auto" asks for bf16 where it exists and fp32 elsewhere.
#pragma once

#include <string>

#include "backend/backend.h"

namespace tt::train {

// "fp32" or "bf16" for a requested "fp32", "bf16" or "auto" (bf16 where `backend` has bf16 products). Leaves
// the backend's precision as it was: use_precision() sets it.
std::string resolve_precision(backend::Backend& backend, const std::string& requested);

// Sets `precision` ("fp32" or "bf16") on `backend`; returns the words for the run's header ("bf16 matmuls
// (oneDNN avx512_core_bf16)"). Throws tt::Error naming option_ref("precision") where bf16 is unavailable.
std::string use_precision(backend::Backend& backend, const std::string& precision);

}  // namespace tt::train
