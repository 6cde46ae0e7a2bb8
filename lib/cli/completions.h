// Shell completions written from a tool's CLI11 definitions, so that a flag is defined once: every tool
// prints its own with `TOOL --completions bash|zsh|fish` (cli::parse answers it), the build writes them
// to build/completions/, and completions/ in the repository holds the same text (a test compares).
//
// What a value completes to comes from the option's type name: "TEXT:{a,b}" (a CLI11::IsMember check)
// offers a and b, "FILE" files, "DIR" (and "MODEL", "HF_DIR") directories, "PATH" (and "OUT", a path to
// write) either; any other type name completes nothing.
// Options in no help group (hidden) are left out.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace tt::cli {

// "bash", "zsh" or "fish"; any other name is a tt::ConfigError naming the three.
std::string completion_script(const CLI::App& app, const std::string& shell);

}  // namespace tt::cli
