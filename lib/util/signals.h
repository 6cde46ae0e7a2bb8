// Ctrl-C and SIGTERM for a long job: the training loop polls a flag between steps to save a
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
//
// Filters (tt-translate, tt-attnviz, tt-tokenize, tt-bleu) use SignalPolicy::whole_lines: a signal ends
// the process at once, as the default action would, unless standard output is being written
// (StdoutWrite); then the writer is woken from a blocked write (a private real-time signal, unblocked in
// the writing thread only during its write), finishes the line it is in and stops with tt::Interrupted.
// Either way a reader never gets half a line.
#pragma once

#include <atomic>
#include <csignal>
#include <thread>

namespace tt::util {

enum class SignalPolicy {
  poll,         // a long job: record the signal after arm(), the job polls pending()
  whole_lines,  // a filter: exit now, or once the line being written to stdout is whole
};

class SignalGuard {
 public:
  // Blocks SIGINT and SIGTERM in this thread, installs the fallback handlers, starts the watcher and
  // clears the flag; the destructor undoes all of it. One guard at a time.
  explicit SignalGuard(SignalPolicy policy = SignalPolicy::poll);
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

// Marks this thread as writing to standard output, for SignalPolicy::whole_lines (without a guard of that
// policy it does nothing). While one lives, a signal is recorded instead of ending the process, and the
// writing thread is woken from a blocked write every 50 ms until it sees stop_signal().
class StdoutWrite {
 public:
  StdoutWrite();
  ~StdoutWrite();
  StdoutWrite(const StdoutWrite&) = delete;
  StdoutWrite& operator=(const StdoutWrite&) = delete;

 private:
  bool active_ = false;
};

// The SIGINT or SIGTERM recorded while standard output was being written, 0 if none.
int stop_signal();

}  // namespace tt::util

