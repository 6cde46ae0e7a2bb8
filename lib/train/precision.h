// The precision of training's matrix products. bf16 operands with fp32 accumulation need bf16
// instructions (oneDNN's effective ISA avx512_core_bf16 or AMX on a CPU); without them training is
// refused rather than silently run in fp32.
#pragma once

#include <string>

#include "backend/backend.h"

namespace tt::train {

// Sets `precision` ("fp32" or "bf16") on `backend`; returns the words for the run's header ("bf16 matmuls
// (oneDNN avx512_core_bf16)"). Throws tt::Error naming option_ref("precision") where bf16 is unavailable.
std::string use_precision(backend::Backend& backend, const std::string& precision);

}  // namespace tt::train
