// Run a tt binary through the shell, as a user would, capturing stdout, stderr and the exit status.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "support/tmp_dir.h"

namespace tt::test {

struct CommandResult {
  int status = -1;  // exit status, or 128+signal
  std::string out;
  std::string err;
};

// `command` is a shell command line; `stdin_text` is fed to its standard input.
inline CommandResult run_command(const std::string& command, const std::string& stdin_text = {}) {
  TmpDir dir;
  std::string in = dir.write("stdin", stdin_text);
  std::string cmd = "( " + command + " ) <'" + in + "' >'" + dir.file("stdout") + "' 2>'" + dir.file("stderr") + "'";
  int raw = std::system(cmd.c_str());
  CommandResult r;
  if (WIFEXITED(raw)) r.status = WEXITSTATUS(raw);
  else if (WIFSIGNALED(raw)) r.status = 128 + WTERMSIG(raw);
  r.out = read_file(dir.file("stdout"));
  r.err = read_file(dir.file("stderr"));
  return r;
}

// Wraps a path in single quotes for the shell (built with append: GCC 12 warns falsely, -Wrestrict, on
// chains like "'" + s + "'").
inline std::string quoted(const std::string& s) {
  std::string q;
  q.reserve(s.size() + 2);
  q.append(1, '\'').append(s).append(1, '\'');
  return q;
}

// Absolute path of a built tool, e.g. tool("tt-bleu").
inline std::string tool(const std::string& name) { return std::string(TT_BIN_DIR) + "/" + name; }

}  // namespace tt::test
