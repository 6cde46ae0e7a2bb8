#include "cli/openmp_env.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>

namespace tt::cli {

void use_short_openmp_spin(char** argv) {
  if (std::getenv("GOMP_SPINCOUNT") || std::getenv("OMP_WAIT_POLICY")) return;
  // The program's own path, not /proc/self/exe: the kernel names a process after the file it executes,
  // and `pkill tt-train`, top and ps should still find "tt-train", not "exe".
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return;
  path[n] = '\0';
  if (setenv("GOMP_SPINCOUNT", "10000", 0) != 0) return;
  execv(path, argv);  // returns only on failure (the file was replaced, say): carry on with libgomp's default
}

}  // namespace tt::cli
