#include "cli/run_tool.h"

#include <cerrno>
#include <csignal>
#include <iostream>
#include <new>

#include "cli/app.h"
#include "util/error.h"

namespace tt::cli {

int run_tool(const char* name, int argc, char** argv, ToolMain body) {
  // A closed pipe must surface as EPIPE on write (quiet exit 0), not kill us with SIGPIPE mid-write.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    int rc = body(argc, argv);
    std::cout.flush();
    if (!std::cout && errno == EPIPE) return 0;
    return rc;
  } catch (const ExitRequest& e) {
    return e.code;
  } catch (const BrokenPipe&) {
    return 0;
  } catch (const Error& e) {
    std::cerr << name << ": error: " << e.what() << "\n";
    if (!e.hint().empty()) std::cerr << name << ": hint: " << e.hint() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << name << ": error: out of memory\n"
              << name << ": hint: use a smaller batch (--max-tokens) or model\n";
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

}  // namespace tt::cli
