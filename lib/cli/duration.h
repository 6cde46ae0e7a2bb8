// A CLI11 transform for durations: "90s", "10m", "2h", "1d" or plain seconds become seconds.
#pragma once

#include <CLI/CLI.hpp>

namespace tt::cli {

CLI::Validator duration_validator();

}  // namespace tt::cli
