// Shared helpers of the CUDA tests: every kernel runs on the CUDA backend and on the CPU backend (the
// reference; its raw pointers are plain host memory) with the same inputs, and the results are compared.
// On a host without a CUDA device the runner (tests/support/cuda_main.cpp) exits 77 before any test, which
// CTest reports as skipped; require_cuda() still fails a test rather than let it pass by doing nothing.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cuda/cuda_factory.h"
#include "support/random_inputs.h"
#include "tensor/buffer.h"

namespace tt::test {

inline std::unique_ptr<backend::Backend> require_cuda() {
  INFO("these tests need a CUDA device; none is visible (run them on a GPU host)");
  REQUIRE(backend::cuda_device_count() > 0);
  return backend::make_cuda_backend(0);
}

inline std::unique_ptr<backend::Backend> cpu_reference() { return backend::make_backend("cpu", 2); }

// A device copy of a host vector, freed with the test (tensor::Buffer is RAII over Backend::allocate).
template <typename T>
class DeviceVector {
 public:
  DeviceVector(backend::Backend& backend, const std::vector<T>& host)
      : backend_(backend), buffer_(backend, host.size() * sizeof(T)), size_(host.size()) {
    backend.copy_from_host(buffer_.data(), host.data(), host.size() * sizeof(T));
  }
  DeviceVector(backend::Backend& backend, size_t n, T value)
      : DeviceVector(backend, std::vector<T>(n, value)) {}
  T* data() const { return static_cast<T*>(buffer_.data()); }
  std::vector<T> to_host() const {
    std::vector<T> host(size_);
    backend_.copy_to_host(host.data(), buffer_.data(), size_ * sizeof(T));
    return host;
  }

 private:
  backend::Backend& backend_;
  tensor::Buffer buffer_;
  size_t size_;
};

// got[i] within atol + rtol * |want[i]| for every i (NaN only where want is NaN, infinities equal);
// reports the first few mismatches. `want` comes from the CPU backend or the double reference.
inline void check_close(const std::vector<float>& got, const std::vector<double>& want, double rtol = 1e-5,
                        double atol = 1e-5) {
  REQUIRE(got.size() == want.size());
  size_t bad = 0;
  std::ostringstream first;
  for (size_t i = 0; i < got.size(); ++i) {
    double g = got[i], w = want[i];
    bool ok = std::isfinite(w) ? std::abs(g - w) <= atol + rtol * std::abs(w) : (std::isnan(w) ? std::isnan(g) : g == w);
    if (!ok && bad++ < 5) first << "  [" << i << "] cuda " << g << " vs " << w << "\n";
  }
  INFO(bad << " of " << got.size() << " elements differ:\n" << first.str());
  CHECK(bad == 0);
}

inline void check_close(const std::vector<float>& got, const std::vector<float>& want, double rtol = 1e-5,
                        double atol = 1e-5) {
  check_close(got, std::vector<double>(want.begin(), want.end()), rtol, atol);
}

// Bit-for-bit equality (dropout masks and the values they select).
inline void check_equal(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  size_t bad = 0;
  std::ostringstream first;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i] && bad++ < 5) first << "  [" << i << "] cuda " << got[i] << " vs cpu " << want[i] << "\n";
  }
  INFO(bad << " of " << got.size() << " elements differ:\n" << first.str());
  CHECK(bad == 0);
}

}  // namespace tt::test
