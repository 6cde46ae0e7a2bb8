#include "cli/completions.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "util/error.h"

namespace tt::cli {
namespace {

enum class Values { none, choices, files, dirs, paths };

struct Flag {
  std::vector<std::string> longs, shorts;  // without their dashes
  std::string description;
  bool takes_value = false;
  Values values = Values::none;
  std::vector<std::string> choices;
};

struct Command {
  std::string name, description;  // a subcommand's, or the tool's for its top level
  std::vector<Flag> flags;
  bool positionals = false;  // words that are not options
  Values positional_values = Values::none;
};

// The first sentence of a help text, on one line: completion menus show a line, not a paragraph.
std::string summary(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  for (const char* end : {". ", "; ", " ("}) {
    const auto at = text.find(end);
    if (at != std::string::npos) text.resize(at);
  }
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

Values values_of(const std::string& type, std::vector<std::string>& choices) {
  const auto open = type.find(":{"), close = type.rfind('}');
  if (open != std::string::npos && close != std::string::npos && close > open) {
    std::stringstream list(type.substr(open + 2, close - open - 2));
    for (std::string c; std::getline(list, c, ',');)
      if (!c.empty()) choices.push_back(c);
    return Values::choices;
  }
  const std::string base = type.substr(0, type.find(':'));
  if (base == "FILE") return Values::files;
  if (base == "DIR" || base == "MODEL" || base == "HF_DIR") return Values::dirs;
  if (base == "PATH" || base == "OUT") return Values::paths;
  return Values::none;
}

Command command_of(const CLI::App& app, const std::string& name) {
  Command c{name, summary(app.get_description()), {}, false, Values::none};
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_group().empty()) continue;  // hidden
    std::vector<std::string> choices;
    const Values v = values_of(o->get_type_name(), choices);
    if (o->get_positional() && !o->nonpositional()) {
      c.positionals = true;
      c.positional_values = v == Values::none ? Values::files : v;  // a bare word: most often a file
      continue;
    }
    Flag f{o->get_lnames(), o->get_snames(), summary(o->get_description()), o->get_expected_min() > 0, v, choices};
    c.flags.push_back(std::move(f));
  }
  return c;
}

std::vector<Command> subcommands_of(const CLI::App& app) {
  std::vector<Command> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    out.push_back(command_of(*sub, sub->get_name()));
  return out;
}

std::vector<std::string> names_of(const std::vector<Command>& commands) {
  std::vector<std::string> names;
  for (const auto& c : commands) names.push_back(c.name);
  return names;
}

std::string function_name(const std::string& tool) {
  std::string f = "_" + tool;
  std::replace(f.begin(), f.end(), '-', '_');
  return f;
}

std::string join(const std::vector<std::string>& words, const std::string& sep) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : sep) + w;
  return out;
}

std::vector<std::string> dashed(const Flag& f) {
  std::vector<std::string> names;
  for (const auto& l : f.longs) names.push_back("--" + l);
  for (const auto& s : f.shorts) names.push_back("-" + s);
  return names;
}

std::string header(const std::string& tool, const std::string& shell) {
  return "# " + shell + " completion for " + tool + ", written by " + tool +
         " from its flag definitions: do not edit, run scripts/update-completions.sh\n";
}

// ---- bash ---------------------------------------------------------------------------------------------

std::string bash_values(Values v, const std::vector<std::string>& choices) {
  switch (v) {
    case Values::choices: return "COMPREPLY=($(compgen -W \"" + join(choices, " ") + "\" -- \"$cur\"))";
    case Values::files: return "COMPREPLY=($(compgen -f -- \"$cur\"))";
    case Values::dirs: return "COMPREPLY=($(compgen -d -- \"$cur\"))";
    case Values::paths: return "COMPREPLY=($(compgen -f -- \"$cur\"))";
    case Values::none: return "";
  }
  return "";
}

std::string bash(const std::string& tool, const Command& top, const std::vector<Command>& subs) {
  std::ostringstream s;
  s << header(tool, "bash") << function_name(tool) << "() {\n"
    << "  local cur prev cmd i\n  COMPREPLY=()\n  cur=${COMP_WORDS[COMP_CWORD]}\n"
    << "  prev=${COMP_WORDS[COMP_CWORD - 1]}\n  cmd=\"\"\n";
  std::vector<const Command*> all{&top};
  for (const auto& c : subs) all.push_back(&c);
  if (!subs.empty()) {
    s << "  for ((i = 1; i < COMP_CWORD; i++)); do\n    case ${COMP_WORDS[i]} in\n      " << join(names_of(subs), " | ")
      << ") cmd=${COMP_WORDS[i]}; break ;;\n    esac\n  done\n";
  }
  // A flag's value: what it completes to; flags that complete alike share one arm.
  std::vector<std::pair<std::string, std::vector<std::string>>> arms;  // action, "$cmd $prev" patterns
  for (const Command* c : all) {
    for (const Flag& f : c->flags) {
      if (!f.takes_value) continue;
      const std::string action = bash_values(f.values, f.choices);
      auto arm = std::find_if(arms.begin(), arms.end(), [&](const auto& a) { return a.first == action; });
      if (arm == arms.end()) arm = arms.insert(arms.end(), {action, {}});
      const std::string command = c == &top ? std::string() : c->name;
      for (const auto& n : dashed(f)) arm->second.push_back("\"" + command + " " + n + "\"");
    }
  }
  s << "  case \"$cmd $prev\" in\n";
  for (const auto& [action, patterns] : arms) {
    s << "    " << join(patterns, " | ") << ")\n      " << (action.empty() ? "" : action + "; ") << "return ;;\n";
  }
  s << "  esac\n";
  auto options_of = [](const Command& c) {
    std::vector<std::string> names;
    for (const Flag& f : c.flags)
      for (const auto& n : dashed(f)) names.push_back(n);
    return join(names, " ");
  };
  auto words = [&](const Command& c, const std::string& indent) {
    std::ostringstream w;
    w << indent << "if [[ $cur == -* ]]; then\n"
      << indent << "  COMPREPLY=($(compgen -W \"" << options_of(c) << "\" -- \"$cur\"))\n";
    if (&c == &top && !subs.empty()) {
      w << indent << "else\n"
        << indent << "  COMPREPLY=($(compgen -W \"" << join(names_of(subs), " ") << "\" -- \"$cur\"))\n";
    } else if (c.positionals) {
      w << indent << "else\n" << indent << "  " << bash_values(c.positional_values, {}) << "\n";
    }
    w << indent << "fi\n";
    return w.str();
  };
  if (subs.empty()) {
    s << words(top, "  ");
  } else {
    s << "  case $cmd in\n";
    for (const auto& c : subs) s << "    " << c.name << ")\n" << words(c, "      ") << "      ;;\n";
    s << "    *)\n" << words(top, "      ") << "      ;;\n  esac\n";
  }
  s << "}\ncomplete -F " << function_name(tool) << " " << tool << "\n";
  return s.str();
}

// ---- zsh ----------------------------------------------------------------------------------------------

// Text inside a single-quoted _arguments spec: ' closes the quotes, [ ] and : are _arguments syntax.
std::string zsh_text(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '\'') out += "'\\''";
    else if (ch == '[' || ch == ']' || ch == ':' || ch == '\\') out += std::string("\\") + ch;
    else out += ch;
  }
  return out;
}

std::string zsh_action(Values v, const std::vector<std::string>& choices) {
  switch (v) {
    case Values::choices: return "(" + join(choices, " ") + ")";
    case Values::files: return "_files";
    case Values::dirs: return "_files -/";
    case Values::paths: return "_files";
    case Values::none: return " ";
  }
  return " ";
}

std::string zsh_specs(const Command& c, const std::string& indent) {
  std::ostringstream s;
  for (const Flag& f : c.flags) {
    const std::vector<std::string> names = dashed(f);
    const std::string exclusive = names.size() > 1 ? "(" + join(names, " ") + ")" : "";
    for (const auto& n : names) {
      s << indent << "'" << exclusive << n << "[" << zsh_text(f.description) << "]";
      if (f.takes_value) s << ":value:" << zsh_action(f.values, f.choices);
      s << "' \\\n";
    }
  }
  if (c.positionals) s << indent << "'*:file:" << zsh_action(c.positional_values, {}) << "' \\\n";
  return s.str();
}

std::string zsh(const std::string& tool, const Command& top, const std::vector<Command>& subs) {
  std::ostringstream s;
  s << "#compdef " << tool << "\n" << header(tool, "zsh") << function_name(tool) << "() {\n";
  if (subs.empty()) {
    s << "  _arguments -s \\\n" << zsh_specs(top, "    ") << "    && return 0\n";
  } else {
    s << "  local line state\n  _arguments -C \\\n" << zsh_specs(top, "    ") << "    '1:command:->command' \\\n"
      << "    '*::arg:->args' && return 0\n  case $state in\n    command)\n      local -a commands\n"
      << "      commands=(\n";
    for (const auto& c : subs) s << "        '" << c.name << ":" << zsh_text(c.description) << "'\n";
    s << "      )\n      _describe command commands ;;\n    args)\n      case $line[1] in\n";
    for (const auto& c : subs)
      s << "        " << c.name << ")\n          _arguments -s \\\n" << zsh_specs(c, "            ")
        << "            && return 0 ;;\n";
    s << "      esac ;;\n  esac\n";
  }
  s << "}\n" << function_name(tool) << " \"$@\"\n";
  return s.str();
}

// ---- fish ---------------------------------------------------------------------------------------------

std::string fish_text(const std::string& text) {
  std::string out = "'";
  for (char ch : text) {
    if (ch == '\'' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "'";
}

std::string fish(const std::string& tool, const Command& top, const std::vector<Command>& subs) {
  std::ostringstream s;
  s << header(tool, "fish") << "complete -c " << tool << " -f\n";
  auto flags = [&](const Command& c, const std::string& condition) {
    for (const Flag& f : c.flags) {
      s << "complete -c " << tool << condition;
      for (const auto& l : f.longs) s << " -l " << l;
      for (const auto& sh : f.shorts) s << (sh.size() == 1 ? " -s " : " -o ") << sh;
      if (f.takes_value) {
        switch (f.values) {
          case Values::choices: s << " -x -a " << fish_text(join(f.choices, " ")); break;
          case Values::files:
          case Values::paths: s << " -r -F"; break;
          case Values::dirs: s << " -x -a '(__fish_complete_directories)'"; break;
          case Values::none: s << " -x"; break;
        }
      }
      s << " -d " << fish_text(f.description) << "\n";
    }
    if (c.positionals && c.positional_values != Values::none)
      s << "complete -c " << tool << condition
        << (c.positional_values == Values::dirs ? " -a '(__fish_complete_directories)'" : " -F") << "\n";
  };
  if (subs.empty()) {
    flags(top, "");
  } else {
    flags(top, " -n '__fish_use_subcommand'");
    for (const auto& c : subs)
      s << "complete -c " << tool << " -n '__fish_use_subcommand' -a " << c.name << " -d " << fish_text(c.description)
        << "\n";
    for (const auto& c : subs) flags(c, " -n '__fish_seen_subcommand_from " + c.name + "'");
  }
  return s.str();
}

}  // namespace

std::string completion_script(const CLI::App& app, const std::string& shell) {
  const std::string tool = app.get_name();
  const Command top = command_of(app, tool);
  const std::vector<Command> subs = subcommands_of(app);
  if (shell == "bash") return bash(tool, top, subs);
  if (shell == "zsh") return zsh(tool, top, subs);
  if (shell == "fish") return fish(tool, top, subs);
  throw ConfigError("--completions: unknown shell '" + shell + "' (expected bash, zsh or fish)");
}

}  // namespace tt::cli
