// Sinusoidal positional encoding (§3.5): PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(...),
// or the same values with every sin in the first half of the row and every cos in the second (the layout
// of Marian and Transformers: PE(pos, i) = sin, PE(pos, D/2 + i) = cos of the same frequency).
// Learned positions (Table 3 row E) are a parameter instead (nn/embedding.h).
#pragma once

#include <vector>

#include "nn/config.h"

namespace tt::nn {

// The table [positions, D], row-major, computed in double and rounded once.
std::vector<float> sinusoidal_table(int positions, int D, SinusoidalLayout layout = SinusoidalLayout::interleaved);

}  // namespace tt::nn
