// Timing for the kernel benchmarks (bench_kernels, bench_decode_gemm): median seconds per call.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <vector>

namespace tt::bench {

// Process CPU seconds: on a shared, oversubscribed machine wall time mostly measures the neighbours.
// With 1 thread this is the kernel's own cost; with more it also counts OpenMP spin-waiting.
inline double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Median seconds per call (wall, or CPU time when TT_BENCH_CPU_TIME is set): 2 warm-up calls, then
// repeat until >= min_total seconds and >= 5 calls.
inline double time_it(const std::function<void()>& f, double min_total) {
  static const bool use_cpu = std::getenv("TT_BENCH_CPU_TIME") != nullptr;
  f();
  f();
  std::vector<double> t;
  double total = 0.0;
  while (total < min_total || t.size() < 5) {
    const auto a = std::chrono::steady_clock::now();
    const double c = cpu_seconds();
    f();
    const double s =
        use_cpu ? cpu_seconds() - c : std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    t.push_back(s);
    total += s;
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace tt::bench
