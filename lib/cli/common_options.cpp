#include "cli/common_options.h"

#include <regex>
#include <thread>

namespace tt::cli {

CLI::Option* add_device_option(CLI::App& app, CommonOptions& o) {
  return app
      .add_option("--device", o.device, "cpu, cuda, cuda:N or auto (CUDA when a GPU is present)")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            static const std::regex ok("cpu|auto|cuda(:[0-9]+)?");
            return std::regex_match(v, ok) ? "" : "expected cpu, cuda, cuda:N or auto, got '" + v + "'";
          },
          "{auto,cpu,cuda}"))  // what the completions offer; cuda:N is accepted too
      ->capture_default_str();
}

CLI::Option* add_threads_option(CLI::App& app, CommonOptions& o, const std::string& help) {
  return app.add_option("--threads", o.threads, help)->check(CLI::Range(0, max_threads))->capture_default_str();
}

CLI::Option* add_seed_option(CLI::App& app, CommonOptions& o, const std::string& help) {
  return app.add_option("--seed", o.seed, help)->capture_default_str();
}

CLI::Option* add_quiet_flag(CLI::App& app, CommonOptions& o, const std::string& help) {
  return app.add_flag("-q,--quiet", o.quiet, help);
}

int resolve_threads(int requested) {
  if (requested > 0) return requested;
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(std::min<unsigned>(n, max_threads));
}

}  // namespace tt::cli
