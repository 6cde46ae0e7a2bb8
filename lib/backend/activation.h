// The feed-forward layer's activation function. ReLU is the paper's (and the only one training has a
// backward for); swish (SiLU, x·σ(x)) and gelu (x·Φ(x), with erf) run the models tt-convert imports.
#pragma once

namespace tt::backend {

enum class Activation { relu, swish, gelu };

}  // namespace tt::backend
