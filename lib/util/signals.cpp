#include "util/signals.h"

#include <unistd.h>

#include <csignal>

#include "util/check.h"

namespace tt::util {

namespace {

volatile std::sig_atomic_t g_pending = 0;
struct sigaction g_old_int, g_old_term;
bool g_installed = false;

extern "C" void on_signal(int signo) {
  if (g_pending != 0) _exit(128 + signo);  // the second signal: leave now
  g_pending = signo;
}

}  // namespace

SignalGuard::SignalGuard() {
  TT_CHECK_MSG(!g_installed, "one SignalGuard at a time");
  g_pending = 0;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // reads and writes in progress continue; the loop polls the flag
  sigaction(SIGINT, &action, &g_old_int);
  sigaction(SIGTERM, &action, &g_old_term);
  g_installed = true;
}

SignalGuard::~SignalGuard() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  g_installed = false;
}

int SignalGuard::pending() const { return g_pending; }

}  // namespace tt::util
