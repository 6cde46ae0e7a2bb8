// SignalGuard: the first signal after arm() is recorded by the guard's watcher thread; SIGINT and SIGTERM
// are blocked in the guard's thread and in threads started under it (so no compute thread is interrupted);
// the guard restores the mask and the old handlers. (The second-signal exit and the save-on-Ctrl-C are
// tested on the real tt-train in tests/train.)
#include <catch2/catch.hpp>
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "util/signals.h"

namespace {

bool blocked(int signo) {
  sigset_t now;
  pthread_sigmask(SIG_BLOCK, nullptr, &now);
  return sigismember(&now, signo) == 1;
}

// The watcher takes a process-directed signal within a tick or two.
int wait_for_pending(const tt::util::SignalGuard& guard) {
  for (int i = 0; i < 400 && guard.pending() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return guard.pending();
}

}  // namespace

TEST_CASE("SignalGuard records SIGINT or SIGTERM and restores the old handlers and mask", "[util][signals]") {
  struct sigaction before {};
  sigaction(SIGINT, nullptr, &before);
  REQUIRE_FALSE(blocked(SIGINT));
  {
    tt::util::SignalGuard guard;
    CHECK(blocked(SIGINT));
    CHECK(blocked(SIGTERM));
    bool worker_blocked = false;
    std::thread([&] { worker_blocked = blocked(SIGINT) && blocked(SIGTERM); }).join();
    CHECK(worker_blocked);  // e.g. OpenMP's threads, started after the guard
    guard.arm();
    CHECK(guard.pending() == 0);
    ::kill(::getpid(), SIGTERM);  // the process survives: the watcher only sets the flag
    CHECK(wait_for_pending(guard) == SIGTERM);
    CHECK(tt::util::SignalGuard::exit_status(guard.pending()) == 143);
  }
  CHECK_FALSE(blocked(SIGINT));
  {
    tt::util::SignalGuard guard;  // a new guard starts clean
    guard.arm();
    CHECK(guard.pending() == 0);
    ::kill(::getpid(), SIGINT);
    CHECK(wait_for_pending(guard) == SIGINT);
    CHECK(tt::util::SignalGuard::exit_status(SIGINT) == 130);
  }
  struct sigaction after {};
  sigaction(SIGINT, nullptr, &after);
  CHECK(after.sa_handler == before.sa_handler);
}
