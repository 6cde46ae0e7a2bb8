// Option checks with messages in words. CLI11's PositiveNumber and NonNegativeNumber state their range
// as "0.000000 to 1797693134862315708145274237317043567981..." (377 characters) and let "nan" through.
#pragma once

#include <CLI/CLI.hpp>

namespace tt::cli {

// A number > 0 (not NaN, not infinite): "--temperature: must be a positive number, got 0".
extern const CLI::Validator positive;
// A number >= 0 (not NaN, not infinite).
extern const CLI::Validator non_negative;
// Any finite number (not NaN, not infinite).
extern const CLI::Validator finite;

}  // namespace tt::cli
