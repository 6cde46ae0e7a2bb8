// Shared CLI11 set-up for every tt tool: --version, help layout, and parsing that maps CLI errors to exit 2.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace tt::cli {

// Thrown to end a tool early with a given exit status (after --help, --version, or a usage error that
// has already been printed). run_tool() turns it into the return value of main().
struct ExitRequest {
  int code;
};

// "tt-bleu 0.1.0"
std::string version_string(const std::string& tool);

// An App with tt's conventions: --version, a footer pointing at the man page.
void configure_app(CLI::App& app, const std::string& tool);

// Parse argv. --help/--version print to stdout and end with 0, as does `--completions bash|zsh|fish` alone
// (the tool's shell completions, cli/completions.h); usage errors print
// "tool: error: ..." plus a hint to stderr and end with 2 (CLI11 alone would return 100+).
void parse(CLI::App& app, int argc, char** argv);

// A usage error found after parsing (flags that contradict each other, a flag value the library refuses):
// prints "tool: error: <message>" and the --help pointer to stderr and ends the tool with exit 2.
[[noreturn]] void usage_error(const CLI::App& app, const std::string& message);

}  // namespace tt::cli
