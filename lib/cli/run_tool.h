// The tool boundary: every main() is `return tt::cli::run_tool("tt-x", argc, argv, &x_main);`.
// It maps exceptions to one message and one exit code, so no tool prints a stack of errors or aborts:
//   0 success (also when stdout's reader goes away: EPIPE is not an error for a filter)
//   1 tt::Error and other runtime failures: "tt-x: error: <what>" (+ "hint: <hint>"); this includes a
//     failed final flush of stdout ("<stdout>: write failed: No space left on device"): data a tool
//     believed written but that never arrived is an error, not a success
//   2 usage errors (bad flags), via cli::ExitRequest or tt::UsageError (a value out of range, options that
//     contradict each other): "tt-x: error: <what>" and "Run 'tt-x --help' for usage."
//   130/143 interrupted by SIGINT/SIGTERM (tools that handle signals return these themselves)
#pragma once

namespace tt::cli {

using ToolMain = int (*)(int argc, char** argv);

// `oom_hint` is the second line printed when the body runs out of memory (std::bad_alloc); a tool
// passes one naming its own flags. Without it the hint is generic and names no flag.
int run_tool(const char* name, int argc, char** argv, ToolMain body, const char* oom_hint = nullptr);

// run_tool for a filter that writes lines to stdout: SIGINT and SIGTERM end it at once, or, while a line
// is being written, once that line is whole (exit 130 / 143): its reader never gets half a line.
int run_filter(const char* name, int argc, char** argv, ToolMain body, const char* oom_hint = nullptr);

}  // namespace tt::cli
