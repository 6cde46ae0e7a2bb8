#include "util/signals.h"

#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <atomic>
#include <ctime>

#include "util/check.h"

namespace tt::util {

namespace {

// Atomics, not volatile sig_atomic_t: the watcher thread writes them and the training thread reads them.
// Lock-free, so the fallback handler may touch them too.
std::atomic<int> g_pending{0};
std::atomic<bool> g_armed{false};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);
struct sigaction g_old_int, g_old_term;
bool g_installed = false;

// Async-signal-safe: called from the fallback handler as well as from the watcher.
void take(int signo) {
  int none = 0;  // not training yet, or the second signal: leave now
  if (!g_armed.load() || !g_pending.compare_exchange_strong(none, signo)) _exit(128 + signo);
}

extern "C" void on_signal(int signo) { take(signo); }

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

SignalGuard::SignalGuard() {
  TT_CHECK_MSG(!g_installed, "one SignalGuard at a time");
  g_pending = 0;
  g_armed = false;
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, &old_mask_);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // reads and writes in progress continue; the loop polls the flag
  sigaction(SIGINT, &action, &g_old_int);
  sigaction(SIGTERM, &action, &g_old_term);
  g_installed = true;
  watcher_ = std::thread([this, set] {
    const timespec tick{0, 50'000'000};  // how soon the destructor's stop is seen
    while (!stop_.load()) {
      const int signo = sigtimedwait(&set, nullptr, &tick);
      if (signo > 0) take(signo);
    }
  });
}

SignalGuard::~SignalGuard() {
  stop_ = true;
  watcher_.join();
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);  // a signal still pending goes to the handler now
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  g_installed = false;
}

void SignalGuard::arm() { g_armed = true; }

int SignalGuard::pending() const { return g_pending; }

}  // namespace tt::util
