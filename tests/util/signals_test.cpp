// SignalGuard: the handler only records the first signal; the guard restores the previous handler.
// (The second-signal exit and the save-on-Ctrl-C are tested on the real tt-train in tests/train.)
#include <catch2/catch.hpp>
#include <csignal>

#include "util/signals.h"

TEST_CASE("SignalGuard records SIGINT or SIGTERM and restores the old handlers", "[util][signals]") {
  struct sigaction before {};
  sigaction(SIGINT, nullptr, &before);
  {
    tt::util::SignalGuard guard;
    CHECK(guard.pending() == 0);
    std::raise(SIGTERM);  // the process survives: the handler only sets the flag
    CHECK(guard.pending() == SIGTERM);
    CHECK(tt::util::SignalGuard::exit_status(guard.pending()) == 143);
  }
  {
    tt::util::SignalGuard guard;  // a new guard starts clean
    CHECK(guard.pending() == 0);
    std::raise(SIGINT);
    CHECK(guard.pending() == SIGINT);
    CHECK(tt::util::SignalGuard::exit_status(SIGINT) == 130);
  }
  struct sigaction after {};
  sigaction(SIGINT, nullptr, &after);
  CHECK(after.sa_handler == before.sa_handler);
}
