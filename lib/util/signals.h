// Ctrl-C and SIGTERM for a long job (GUIDE §7.5): the training loop polls a flag between steps to save a
// checkpoint and exit 130 / 143. A second signal while the first is pending ends the process at once with
// _exit, so a user is never stuck behind a slow save; the last complete checkpoint is untouched because
// every checkpoint is written into a temporary directory and renamed.
//
// The signals are taken by a thread of the guard's own (sigtimedwait), with SIGINT and SIGTERM blocked in
// the thread that makes the guard and so in every thread it starts afterwards (OpenMP's, MPI's). An
// asynchronous handler interrupting a compute thread corrupted the heap now and then (a signal delivered
// inside oneDNN's JIT code: about 1 run in 15 of tt-train's Ctrl-C test). Make the guard before any thread
// is started. A flag-only handler (CERT SIG30-C) stays installed for a thread that does not block them.
// Until arm(), a signal ends the process at once, as the default action would (nothing to save yet).
// The flag is process-wide state by nature (signals are); it is the only such state in tt.
#pragma once

#include <atomic>
#include <csignal>
#include <thread>

namespace tt::util {

class SignalGuard {
 public:
  // Blocks SIGINT and SIGTERM in this thread, installs the fallback handlers, starts the watcher and
  // clears the flag; the destructor undoes all of it. One guard at a time.
  SignalGuard();
  ~SignalGuard();
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

  // From now on the first signal is recorded for the caller to act on, instead of ending the process.
  void arm();
  // The first signal received (SIGINT or SIGTERM) since arm(), 0 if none.
  int pending() const;
  // The conventional exit status for a signal: 128 + signo (130 for SIGINT, 143 for SIGTERM).
  static int exit_status(int signo) { return 128 + signo; }

 private:
  sigset_t old_mask_;
  std::atomic<bool> stop_{false};
  std::thread watcher_;
};

}  // namespace tt::util
