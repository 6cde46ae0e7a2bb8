// The tools that compute re-execute themselves once with GOMP_SPINCOUNT set (lib/cli/openmp_env.h): the
// running process has the variable, keeps its name (pkill tt-train must still find it), and a user's own
// setting is left alone.
#include <catch2/catch.hpp>

#include <string>

#include "support/run_command.h"
#include "support/tmp_dir.h"

using namespace tt::test;

namespace {

// Starts a long tt-train run and prints its name and wait-policy variables once `expected` (one of those
// lines) shows in its environment, or after 10 s (a sanitizer build starts slowly), then stops it.
CommandResult inspect_running_train(const std::string& env, const std::string& expected) {
  TmpDir dir;
  const std::string train = tool("tt-train") +
                            " --preset tiny --layers 1 --d-model 32 --d-ff 64 --heads 2 --vocab-size 24"
                            " --synthetic-steps 1000000 --batch-size 2 --src-len 4 --tgt-len 4 --quiet --threads 1"
                            " -o " + quoted(dir.file("run"));
  const std::string vars = "tr '\\0' '\\n' </proc/$pid/environ | grep -E '^(GOMP_SPINCOUNT|OMP_WAIT_POLICY)='";
  return run_command(env + " " + train + " >/dev/null & pid=$!; for i in $(seq 100); do"
                     " [ \"$(cat /proc/$pid/comm)\" = tt-train ] && " + vars + " | grep -qx '" + expected +
                     "' && break; sleep 0.1; done; cat /proc/$pid/comm; " + vars + "; kill -KILL $pid");
}

}  // namespace

TEST_CASE("openmp env: tt-train runs with GOMP_SPINCOUNT=10000 under its own name", "[cli]") {
  const auto r = inspect_running_train("env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY", "GOMP_SPINCOUNT=10000");
  INFO(r.err);
  CHECK(r.out == "tt-train\nGOMP_SPINCOUNT=10000\n");
}

TEST_CASE("openmp env: a wait policy the user set is kept", "[cli]") {
  CHECK(inspect_running_train("env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=active", "OMP_WAIT_POLICY=active").out ==
        "tt-train\nOMP_WAIT_POLICY=active\n");
  CHECK(inspect_running_train("env GOMP_SPINCOUNT=7", "GOMP_SPINCOUNT=7").out == "tt-train\nGOMP_SPINCOUNT=7\n");
}
