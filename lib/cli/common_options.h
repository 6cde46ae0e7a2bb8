// The flags several tools share, each defined once: same name, type, range and help everywhere (so that
// help, man pages and completions agree). A tool adds the ones it has; the values land in one CommonOptions.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace tt::cli {

struct CommonOptions {
  std::string device = "auto";  // cpu, cuda, cuda:N, auto
  int threads = 0;              // 0: all cores
  uint64_t seed = 1;
  bool quiet = false;
};

// Largest --threads value accepted (libgomp allocates per-thread state up front).
inline constexpr int max_threads = 256;

// --device cpu|cuda|cuda:N|auto
CLI::Option* add_device_option(CLI::App& app, CommonOptions& o);
// --threads N (0 = all cores, at most max_threads)
CLI::Option* add_threads_option(CLI::App& app, CommonOptions& o, const std::string& help = "CPU threads (0: all cores)");
// --seed N
CLI::Option* add_seed_option(CLI::App& app, CommonOptions& o, const std::string& help);
// -q,--quiet
CLI::Option* add_quiet_flag(CLI::App& app, CommonOptions& o, const std::string& help = "Print no progress or notes on stderr");

// The number of threads to use: `requested` if > 0, else the machine's cores (at least 1).
int resolve_threads(int requested);

}  // namespace tt::cli
