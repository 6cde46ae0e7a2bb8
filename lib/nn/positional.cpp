#include "nn/positional.h"

#include <cmath>

namespace tt::nn {

std::vector<float> sinusoidal_table(int positions, int D, SinusoidalLayout layout) {
  std::vector<float> table(static_cast<size_t>(positions) * D);
  const bool halves = layout == SinusoidalLayout::halves;
  for (int pos = 0; pos < positions; ++pos) {
    for (int j = 0; j < D; ++j) {
      // Column j's frequency index 2i and whether it holds the sine.
      const int i2 = halves ? 2 * (j % (D / 2)) : j - j % 2;
      const bool sine = halves ? j < D / 2 : j % 2 == 0;
      const double angle = pos / std::pow(10000.0, static_cast<double>(i2) / D);
      table[static_cast<size_t>(pos) * D + j] = static_cast<float>(sine ? std::sin(angle) : std::cos(angle));
    }
  }
  return table;
}

}  // namespace tt::nn
