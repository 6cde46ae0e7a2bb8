#include "util/signals.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <ctime>

#include "util/check.h"

namespace tt::util {

namespace {

// Atomics, not volatile sig_atomic_t: the watcher thread writes them and the training thread reads them.
// Lock-free, so the fallback handler may touch them too.
std::atomic<int> g_pending{0};
std::atomic<bool> g_armed{false};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);
struct sigaction g_old_int, g_old_term, g_old_wake;
bool g_installed = false;
SignalPolicy g_policy = SignalPolicy::poll;

// whole_lines: whether stdout is being written. A signal in `idle` claims `exiting` and ends the process;
// one in `writing` is recorded for the writer, which leaves `writing` only between lines.
enum WriteState : int { idle, writing, exiting };
std::atomic<int> g_write_state{idle};
std::atomic<pthread_t> g_writer{};

// Wakes the writing thread from a blocked write (EINTR). Blocked in every thread but that one, and there
// only inside its write, so its empty handler never runs in the middle of computation.
int wake_signal() { return SIGRTMIN + 2; }
extern "C" void on_wake(int) {}

// Async-signal-safe: called from the fallback handler as well as from the watcher.
void take(int signo) {
  int none = 0;
  if (g_policy == SignalPolicy::whole_lines) {
    int state = idle;  // not writing: nothing to finish
    if (g_write_state.compare_exchange_strong(state, exiting) || state == exiting) _exit(128 + signo);
  } else if (!g_armed.load()) {
    _exit(128 + signo);  // not training yet: nothing to save
  }
  if (!g_pending.compare_exchange_strong(none, signo)) _exit(128 + signo);  // the second signal: leave now
}

extern "C" void on_signal(int signo) { take(signo); }

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

sigset_t wake_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, wake_signal());
  return set;
}

}  // namespace

SignalGuard::SignalGuard(SignalPolicy policy) {
  TT_CHECK_MSG(!g_installed, "one SignalGuard at a time");
  g_pending = 0;
  g_armed = false;
  g_policy = policy;
  g_write_state = idle;
  const sigset_t set = stop_signals();
  sigset_t blocked = set;
  sigaddset(&blocked, wake_signal());
  pthread_sigmask(SIG_BLOCK, &blocked, &old_mask_);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // reads and writes in progress continue; the loop polls the flag
  sigaction(SIGINT, &action, &g_old_int);
  sigaction(SIGTERM, &action, &g_old_term);
  struct sigaction wake {};
  wake.sa_handler = on_wake;
  sigemptyset(&wake.sa_mask);
  wake.sa_flags = 0;  // no SA_RESTART: the blocked write returns
  sigaction(wake_signal(), &wake, &g_old_wake);
  g_installed = true;
  watcher_ = std::thread([this, set] {
    const timespec tick{0, 50'000'000};  // how soon the destructor's stop is seen
    while (!stop_.load()) {
      const int signo = sigtimedwait(&set, nullptr, &tick);
      if (signo > 0) take(signo);
      // Again every tick: a wake that lands just before the write blocks is otherwise lost.
      if (g_pending.load() != 0 && g_write_state.load() == writing) pthread_kill(g_writer.load(), wake_signal());
    }
  });
}

SignalGuard::~SignalGuard() {
  stop_ = true;
  watcher_.join();
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);  // a signal still pending goes to the handler now
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  sigaction(wake_signal(), &g_old_wake, nullptr);
  g_policy = SignalPolicy::poll;
  g_installed = false;
}

StdoutWrite::StdoutWrite() {
  if (!g_installed || g_policy != SignalPolicy::whole_lines) return;
  g_writer = pthread_self();
  int state = idle;
  if (!g_write_state.compare_exchange_strong(state, writing))
    for (;;) pause();  // `exiting`: the watcher is ending the process; write nothing more
  active_ = true;
  const sigset_t set = wake_set();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

StdoutWrite::~StdoutWrite() {
  if (!active_) return;
  const sigset_t set = wake_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  g_write_state = idle;
}

int stop_signal() { return g_policy == SignalPolicy::whole_lines ? g_pending.load() : 0; }

void SignalGuard::arm() { g_armed = true; }

int SignalGuard::pending() const { return g_pending; }

}  // namespace tt::util
