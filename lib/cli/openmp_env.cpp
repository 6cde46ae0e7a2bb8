#include "cli/openmp_env.h"

#include <unistd.h>

#include <cstdlib>

namespace tt::cli {

void use_short_openmp_spin(char** argv) {
  if (std::getenv("GOMP_SPINCOUNT") || std::getenv("OMP_WAIT_POLICY")) return;
  if (setenv("GOMP_SPINCOUNT", "10000", 0) != 0) return;
  execv("/proc/self/exe", argv);  // returns only on failure: carry on with libgomp's default
}

}  // namespace tt::cli
