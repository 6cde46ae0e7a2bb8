#include <catch2/catch.hpp>

#include "nn/positional.h"


TEST_CASE("sinusoidal positions: the paper's worked numbers", "[nn][positional]") {
  auto pe = tt::nn::sinusoidal_table(3, 4);
  // PE(pos=0) = [sin 0, cos 0, sin 0, cos 0]
  CHECK(pe[0] == 0.0f);
  CHECK(pe[1] == 1.0f);
  CHECK(pe[2] == 0.0f);
  CHECK(pe[3] == 1.0f);
  // PE(pos=1, d_model=4) = [0.841471, 0.540302, 0.01, 0.99995]
  CHECK(pe[4] == Approx(0.841471).margin(1e-6));
  CHECK(pe[5] == Approx(0.540302).margin(1e-6));
  CHECK(pe[6] == Approx(0.01).margin(1e-6));
  CHECK(pe[7] == Approx(0.99995).margin(1e-6));
  // PE(pos=2): sin 2, cos 2, sin 0.02, cos 0.02
  CHECK(pe[8] == Approx(0.909297).margin(1e-6));
  CHECK(pe[9] == Approx(-0.416147).margin(1e-6));
  CHECK(pe[10] == Approx(0.019999).margin(1e-6));
  CHECK(pe[11] == Approx(0.9998).margin(1e-6));
}

TEST_CASE("sinusoidal positions, halves layout: every sine first, then every cosine (Marian, Transformers)",
          "[nn][positional]") {
  auto pe = tt::nn::sinusoidal_table(3, 4, tt::nn::SinusoidalLayout::halves);
  // PE(pos=1, d_model=4) = [sin 1, sin 0.01, cos 1, cos 0.01]
  CHECK(pe[4] == Approx(0.841471).margin(1e-6));
  CHECK(pe[5] == Approx(0.0099998).margin(1e-6));
  CHECK(pe[6] == Approx(0.540302).margin(1e-6));
  CHECK(pe[7] == Approx(0.99995).margin(1e-6));
  // The same values as the interleaved table, columns permuted.
  const auto paper = tt::nn::sinusoidal_table(50, 16);
  const auto halves = tt::nn::sinusoidal_table(50, 16, tt::nn::SinusoidalLayout::halves);
  for (int pos = 0; pos < 50; ++pos)
    for (int i = 0; i < 8; ++i) {
      CHECK(halves[pos * 16 + i] == paper[pos * 16 + 2 * i]);
      CHECK(halves[pos * 16 + 8 + i] == paper[pos * 16 + 2 * i + 1]);
    }
}
