// The tool boundary: every main() is `return tt::cli::run_tool("tt-x", argc, argv, &x_main);`.
// It maps exceptions to one message and one exit code, so no tool prints a stack of errors or aborts:
//   0 success (also when stdout's reader goes away: EPIPE is not an error for a filter)
//   1 tt::Error and other runtime failures: "tt-x: error: <what>" (+ "hint: <hint>")
//   2 usage errors (bad flags), via cli::ExitRequest
//   130/143 interrupted by SIGINT/SIGTERM (tools that handle signals return these themselves)
#pragma once

namespace tt::cli {

using ToolMain = int (*)(int argc, char** argv);

int run_tool(const char* name, int argc, char** argv, ToolMain body);

}  // namespace tt::cli
