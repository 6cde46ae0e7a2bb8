#include "cli/flag_names.h"

#include <algorithm>

namespace tt::cli {

FlagNames::FlagNames(const CLI::App& app, const std::map<std::string, std::string>& extra) : names_(extra) {
  for (const CLI::Option* option : app.get_options())
    for (const std::string& name : option->get_lnames()) {
      std::string field = name;
      std::replace(field.begin(), field.end(), '-', '_');
      names_.emplace(field, "--" + name);  // `extra` wins
    }
}

std::string FlagNames::operator()(const std::string& field) const {
  const auto it = names_.find(field);
  return it == names_.end() ? field : it->second;
}

}  // namespace tt::cli
