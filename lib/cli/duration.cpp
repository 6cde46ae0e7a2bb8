#include "cli/duration.h"

#include <regex>
#include <string>

namespace tt::cli {

CLI::Validator duration_validator() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        static const std::regex ok(R"(([0-9]+(\.[0-9]+)?)([smhd]?))");
        std::smatch m;
        if (!std::regex_match(v, m, ok)) return "expected a duration such as 90s, 10m or 2h, got '" + v + "'";
        const double unit = m[3] == "m" ? 60 : m[3] == "h" ? 3600 : m[3] == "d" ? 86400 : 1;
        v = std::to_string(std::stod(m[1].str()) * unit);
        return "";
      },
      "DURATION");
}

}  // namespace tt::cli
