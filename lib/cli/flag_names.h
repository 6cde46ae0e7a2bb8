// The library names options by field ("{max_len}", util/error.h); a tool's messages name its flags.
// FlagNames maps one to the other from the tool's own flag definitions, so the mapping is not written
// twice: each long flag names the field spelled the same with '_' ("--max-len" names max_len), and
// `extra` adds the fields whose flag is spelled differently ({"time_limit_s", "--time-limit"}).
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>

#include "util/error.h"

namespace tt::cli {

class FlagNames {
 public:
  explicit FlagNames(const CLI::App& app, const std::map<std::string, std::string>& extra = {});
  // The flag for `field`, or the field itself where the tool has none.
  std::string operator()(const std::string& field) const;

 private:
  std::map<std::string, std::string> names_;
};

// Runs `body`; a tt::Error escaping it leaves with its option markers named as the tool's flags.
template <class Body>
auto with_flag_names(const FlagNames& names, Body&& body) {
  try {
    return body();
  } catch (Error& e) {
    e.name_options(names);
    throw;
  }
}

}  // namespace tt::cli
