// Sinusoidal positional encoding (§3.5): PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(...).
// Learned positions (Table 3 row E) are a parameter instead (nn/embedding.h).
#pragma once

#include <vector>

namespace tt::nn {

// The table [positions, D], row-major, computed in double and rounded once.
std::vector<float> sinusoidal_table(int positions, int D);

}  // namespace tt::nn
