#include "nn/positional.h"

#include <cmath>

namespace tt::nn {

std::vector<float> sinusoidal_table(int positions, int D) {
  std::vector<float> table(static_cast<size_t>(positions) * D);
  for (int pos = 0; pos < positions; ++pos) {
    for (int j = 0; j < D; ++j) {
      const int i2 = j - j % 2;  // 2i
      const double angle = pos / std::pow(10000.0, static_cast<double>(i2) / D);
      table[static_cast<size_t>(pos) * D + j] = static_cast<float>(j % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  }
  return table;
}

}  // namespace tt::nn
