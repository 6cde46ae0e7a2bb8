#include "cli/validators.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace tt::cli {

namespace {

// `test` on the value as a double; the message when it fails (a value that is no number CLI11's own
// conversion reports).
CLI::Validator number_check(bool (*test)(double), const char* requirement, const char* name) {
  return CLI::Validator(
      [test, requirement](std::string& input) -> std::string {
        char* end = nullptr;
        const double x = std::strtod(input.c_str(), &end);
        if (end == input.c_str() || *end != '\0') return {};
        return test(x) ? std::string() : std::string("must be ") + requirement + ", got " + input;
      },
      name);
}

}  // namespace

const CLI::Validator positive = number_check([](double x) { return std::isfinite(x) && x > 0; }, "a positive number", "POSITIVE");
const CLI::Validator non_negative =
    number_check([](double x) { return std::isfinite(x) && x >= 0; }, "a number >= 0", "NONNEGATIVE");
const CLI::Validator finite = number_check([](double x) { return std::isfinite(x); }, "a finite number", "NUMBER");

}  // namespace tt::cli
