#include "cli/run_tool.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <string>

#include "cli/app.h"
#include "util/error.h"
#include "util/signals.h"
#include "util/text_io.h"

namespace tt::cli {

namespace {

// A standard stream the caller closed (`tool >&-`) is reopened on /dev/null in the opposite direction
// (as gnulib's stdopen does), so that (a) the next file the tool opens cannot land on fd 0/1/2 and
// receive our output, and (b) any use of the stream fails with EBADF and is reported, never lost.
void reopen_closed_std_streams() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int null_fd = ::open("/dev/null", fd == STDIN_FILENO ? O_WRONLY : O_RDONLY);
    if (null_fd >= 0 && null_fd != fd) {
      ::dup2(null_fd, fd);
      ::close(null_fd);
    }
  }
}

// Flushes std::cout and stdout; returns 0 if everything the tool wrote arrived, else the errno to report.
int finish_stdout() {
  errno = 0;
  std::cout.flush();
  int error = std::cout.good() ? 0 : (errno != 0 ? errno : EIO);
  if (std::fflush(stdout) != 0 && error == 0) error = errno != 0 ? errno : EIO;
  if (std::ferror(stdout) && error == 0) error = EIO;  // an earlier write failed and nobody noticed
  return error;
}

std::string describe_write_error(int error) {
  if (error == EBADF) return "standard output is closed";
  return std::strerror(error);
}

// The exit status once stdout is flushed: a failed final write turns success into 1.
int checked_exit(const char* name, int rc) {
  try {
    util::flush_stdout();  // the lines still buffered in util/text_io
  } catch (const BrokenPipe&) {
    return rc;
  } catch (const Interrupted& e) {
    return 128 + e.signo;
  } catch (const Error& e) {
    std::cerr << name << ": error: " << e.what() << "\n";
    return rc != 0 ? rc : 1;
  }
  const int error = finish_stdout();
  if (error == 0 || error == EPIPE) return rc;
  std::cerr << name << ": error: <stdout>: write failed: " << describe_write_error(error) << "\n";
  return rc != 0 ? rc : 1;
}

}  // namespace

int run_tool(const char* name, int argc, char** argv, ToolMain body, const char* oom_hint) {
  // A closed pipe must surface as EPIPE on write (quiet exit 0), not kill us with SIGPIPE mid-write.
  std::signal(SIGPIPE, SIG_IGN);
  reopen_closed_std_streams();
  try {
    return checked_exit(name, body(argc, argv));
  } catch (const ExitRequest& e) {
    return checked_exit(name, e.code);  // --help and --version output must arrive too
  } catch (const BrokenPipe&) {
    return 0;
  } catch (const Interrupted& e) {
    return 128 + e.signo;  // stopped between two lines; nothing more is written
  } catch (const UsageError& e) {
    std::cerr << name << ": error: " << e.what() << "\n";
    if (!e.hint().empty()) std::cerr << name << ": hint: " << e.hint() << "\n";
    std::cerr << "Run '" << name << " --help' for usage.\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << name << ": error: " << e.what() << "\n";
    if (!e.hint().empty()) std::cerr << name << ": hint: " << e.hint() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << name << ": error: out of memory\n"
              << name << ": hint: "
              << (oom_hint ? oom_hint : "the job needs more memory than this machine gives it; make it smaller")
              << "\n";
    return 1;
  } catch (const InternalError& e) {
    std::cerr << name << ": internal error: " << e.what() << "\n"
              << name << ": hint: this is a bug in tt; please report it with the command you ran\n";
    return 70;
  } catch (const std::exception& e) {
    std::cerr << name << ": error: " << e.what() << "\n";
    return 1;
  }
}

int run_filter(const char* name, int argc, char** argv, ToolMain body, const char* oom_hint) {
  util::SignalGuard signals(util::SignalPolicy::whole_lines);  // before the body starts any thread
  return run_tool(name, argc, argv, body, oom_hint);
}

}  // namespace tt::cli

