// Finite-difference gradient checks for nn/ layers and the whole model (fp32 on the device; loss summed in
// double on the host). Central differences (f(x+h) - f(x-h)) / 2h on a sample of coordinates, compared with
// the analytic gradient under |a - n| <= rtol * max(|a|, |n|) + atol, atol = atol_frac * max|analytic|.
// A self-test (grad_check_test.cpp) shows a gradient off by a few percent, or one wrong coordinate, fails.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "nn/params.h"
#include "tensor/tensor.h"

namespace tt::test {

inline std::vector<float> random_values(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

inline tensor::Tensor random_tensor(backend::Backend& backend, tensor::Shape shape, uint64_t seed, float scale = 1.0f) {
  return tensor::Tensor::from_host(backend, shape, random_values(static_cast<size_t>(shape.numel()), seed, -scale, scale));
}

// Sum of a[i] * b[i] in double: a random linear functional of a layer's output is the scalar loss of the
// layer tests (its gradient with respect to the output is simply b).
inline double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

// `count` distinct coordinates in [0, n) (all of them if n <= count).
inline std::vector<int64_t> sample_coords(int64_t n, int count, uint64_t seed) {
  std::vector<int64_t> all(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
  std::mt19937_64 rng(seed);
  std::shuffle(all.begin(), all.end(), rng);
  if (n > count) all.resize(static_cast<size_t>(count));
  return all;
}

struct GradCheck {
  int checked = 0;
  int failed = 0;
  double max_abs_error = 0;
  std::string report;  // the failing coordinates
  bool ok() const { return checked > 0 && failed == 0; }
};

inline float get_element(const tensor::Tensor& x, int64_t i) {
  float v = 0;
  x.backend().copy_to_host(&v, x.f32() + i, sizeof(float));
  return v;
}

inline void set_element(const tensor::Tensor& x, int64_t i, float v) {
  x.backend().copy_from_host(x.f32() + i, &v, sizeof(float));
}

// x: the tensor whose gradient is checked (perturbed in place, restored afterwards); analytic: dloss/dx
// (x.numel() values); loss: recomputes the scalar loss from the current values.
// allow_kinks: ReLU is not differentiable where a hidden unit crosses 0, and finite differences that step
// over such a point average two slopes. With allow_kinks, a coordinate whose one-sided differences disagree
// (a kink within the step) passes if the analytic value matches either side; at most max(1, 2 %) of the
// coordinates may be excused this way, so a wrong gradient cannot hide behind it.
inline GradCheck check_gradient(const std::string& name, const tensor::Tensor& x, const std::vector<float>& analytic,
                                const std::vector<int64_t>& coords, const std::function<double()>& loss,
                                double step = 1e-2, double rtol = 2e-2, double atol_frac = 2e-3,
                                bool allow_kinks = false) {
  GradCheck r;
  double scale = 0;
  for (float a : analytic) scale = std::max(scale, static_cast<double>(std::fabs(a)));
  const double atol = atol_frac * scale + 1e-7;
  auto close = [&](double a, double b, double rel) { return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b)) + atol; };
  const double f0 = allow_kinks ? loss() : 0.0;
  int kinks = 0;
  std::ostringstream os;
  for (int64_t i : coords) {
    const float original = get_element(x, i);
    const float hi = original + static_cast<float>(step), lo = original - static_cast<float>(step);
    set_element(x, i, hi);
    const double f_hi = loss();
    set_element(x, i, lo);
    const double f_lo = loss();
    set_element(x, i, original);
    const double h_hi = static_cast<double>(hi) - original, h_lo = original - static_cast<double>(lo);
    const double numeric = (f_hi - f_lo) / (h_hi + h_lo);
    const double a = analytic[static_cast<size_t>(i)];
    const double err = std::fabs(a - numeric);
    ++r.checked;
    if (close(a, numeric, rtol)) {
      r.max_abs_error = std::max(r.max_abs_error, err);
      continue;
    }
    if (allow_kinks) {
      const double right = (f_hi - f0) / h_hi, left = (f0 - f_lo) / h_lo;
      if (!close(right, left, 4 * rtol) && (close(a, right, 4 * rtol) || close(a, left, 4 * rtol))) {
        ++kinks;
        os << name << "[" << i << "]: kink (left " << left << ", right " << right << "), analytic " << a << "\n";
        continue;
      }
    }
    ++r.failed;
    r.max_abs_error = std::max(r.max_abs_error, err);
    os << name << "[" << i << "]: analytic " << a << ", numeric " << numeric << "\n";
  }
  if (kinks > std::max(1, r.checked / 50)) {
    r.failed += kinks;
    os << name << ": too many kinks excused (" << kinks << ")\n";
  }
  os << name << ": " << r.failed << " of " << r.checked << " coordinates off; max |error| " << r.max_abs_error
     << " (gradient scale " << scale << ")\n";
  r.report = os.str();
  return r;
}

// Fills every parameter with U(-scale, scale) (LayerNorm gains included: a generic point, not the init).
inline void randomize(const nn::ParameterSet& params, uint64_t seed, float scale = 0.5f) {
  auto v = random_values(static_cast<size_t>(params.flat_size()), seed, -scale, scale);
  params.values().backend().copy_from_host(params.values().f32(), v.data(), v.size() * sizeof(float));
}

// Every flat gradient (alignment padding included) set to NaN: what a previous step could have left, made
// loud, for tests of lazily zeroed gradients (nn::GradientStart).
inline void poison_gradients(const nn::ParameterSet& params) {
  const std::vector<float> nan(static_cast<size_t>(params.flat_size()), std::numeric_limits<float>::quiet_NaN());
  params.grads().backend().copy_from_host(params.grads().f32(), nan.data(), nan.size() * sizeof(float));
}

// `per_param` coordinates of each parameter tensor, as indices into the flat buffer.
inline std::vector<int64_t> param_coords(const nn::ParameterSet& params, int per_param, uint64_t seed) {
  std::vector<int64_t> coords;
  for (size_t i = 0; i < params.all().size(); ++i) {
    const auto& p = params[i];
    for (int64_t c : sample_coords(p.shape.numel(), per_param, seed + i)) coords.push_back(p.offset + c);
  }
  return coords;
}

}  // namespace tt::test
