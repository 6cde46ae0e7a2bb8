// The precision of training's matrix products. bf16 operands with fp32 accumulation need bf16
// instructions (oneDNN's effective ISA avx512_core_bf16 or AMX on a CPU); without them training is
// refused rather than silently run in fp32. "auto" takes bf16 only where it is also clearly faster: the
// instructions alone do not say so (on an Intel Xeon with AVX512-BF16 but no AMX, oneDNN's bf16 products
// ran at 0.57x fp32's speed; on a Zen 4 about 2x, with AMX 3-7x), so auto times one product both ways on
// the device itself.
#pragma once

#include <string>

#include "backend/backend.h"

namespace tt::train {

// The fastest of `seconds_fp32` and `seconds_bf16` for one product, bf16 only when it takes at most 90 %
// of fp32's time (a tie goes to the more precise one; the margin keeps the pick steady against timer noise).
bool bf16_is_faster(double seconds_fp32, double seconds_bf16);

struct PrecisionPick {
  std::string precision;  // "fp32" or "bf16"
  std::string reason;     // for "auto" where bf16 exists: the two timings behind the pick; else empty
};

// "fp32" or "bf16" for a requested "fp32", "bf16" or "auto" (see above). Leaves the backend's precision as
// it was: use_precision() sets it.
PrecisionPick resolve_precision(backend::Backend& backend, const std::string& requested);

// Sets `precision` ("fp32" or "bf16") on `backend`; returns the words for the run's header ("bf16 matmuls
// (oneDNN avx512_core_bf16)"). Throws tt::Error naming option_ref("precision") where bf16 is unavailable.
std::string use_precision(backend::Backend& backend, const std::string& precision);

}  // namespace tt::train
