// The PID of a process that has exited and been reaped: no process has it, for now (tests of code that
// tells live owners from dead ones).
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tt::test {

inline pid_t dead_pid() {
  const pid_t pid = fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

}  // namespace tt::test
