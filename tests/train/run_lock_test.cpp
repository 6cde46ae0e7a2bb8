// One run directory, one holder: RUN/lock is taken with flock(), which conflicts between two open()s even
// in one process, names its holder's PID, and is free again once the holder is gone, however it went.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <optional>

#include "support/tmp_dir.h"
#include "train/run_lock.h"
#include "util/error.h"

namespace fs = std::filesystem;
using tt::test::read_file;

TEST_CASE("RunLock: one holder at a time, named by PID in the refusal", "[run_lock]") {
  tt::test::TmpDir tmp;
  const std::string run = tmp.file("run");  // created by the lock
  const std::string pid = std::to_string(::getpid());
  {
    tt::train::RunLock lock(run);
    CHECK(lock.path() == run + "/lock");
    CHECK(read_file(run + "/lock") == pid + "\n");
    try {
      tt::train::RunLock second(run);
      FAIL("a second lock was granted");
    } catch (const tt::Error& e) {
      CHECK_THAT(e.what(), Catch::StartsWith(run + " is in use") && Catch::Contains("pid " + pid) &&
                               Catch::Contains(run + "/lock"));
      CHECK_THAT(e.hint(), Catch::Contains("one tt-train at a time"));
    }
    CHECK(read_file(run + "/lock") == pid + "\n");  // the refusal leaves the holder's PID
  }
  CHECK(read_file(run + "/lock").empty());  // released: no holder named
  std::optional<tt::train::RunLock> again;
  CHECK_NOTHROW(again.emplace(run));
}

TEST_CASE("RunLock: a holder killed with SIGKILL leaves no stale lock", "[run_lock]") {
  tt::test::TmpDir tmp;
  const std::string run = tmp.path();
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = fork();
  if (child == 0) {
    try {
      tt::train::RunLock lock(run);
      const char c = 'x';
      if (::write(ready[1], &c, 1) != 1) ::_exit(2);
      ::pause();
    } catch (...) {
    }
    ::_exit(1);
  }
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  CHECK_THROWS_WITH(tt::train::RunLock(run), Catch::Contains("pid " + std::to_string(child)));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  CHECK_NOTHROW(tt::train::RunLock(run));
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_CASE("RunLock: a run directory that cannot be made is an IoError naming it", "[run_lock]") {
  tt::test::TmpDir tmp;
  const std::string file = tmp.write("a-file", "x");
  CHECK_THROWS_AS(tt::train::RunLock(file + "/run"), tt::IoError);
  CHECK_THROWS_WITH(tt::train::RunLock(file + "/run"), Catch::Contains(file + "/run"));
}
