// Ctrl-C and SIGTERM for a long job (GUIDE §7.5): a flag-only handler (CERT SIG30-C: the handler only
// stores the signal number), which the training loop polls between steps to save a checkpoint and exit
// 130 / 143. A second signal while the first is pending ends the process at once with _exit (the one
// async-signal-safe way out), so a user is never stuck behind a slow save; the last complete checkpoint
// is untouched because every checkpoint is written into a temporary directory and renamed.
// The flag is process-wide state by nature (signals are); it is the only such state in tt.
#pragma once

namespace tt::util {

class SignalGuard {
 public:
  // Installs the handlers for SIGINT and SIGTERM and clears the flag; the destructor restores the
  // previous handlers. One guard at a time.
  SignalGuard();
  ~SignalGuard();
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

  // The first signal received (SIGINT or SIGTERM), 0 if none.
  int pending() const;
  // The conventional exit status for a signal: 128 + signo (130 for SIGINT, 143 for SIGTERM).
  static int exit_status(int signo) { return 128 + signo; }
};

}  // namespace tt::util
