// What a killed run left in its directory goes when the next run starts: the temporaries of processes that
// are gone, never a live process's, never a user's file, never a checkpoint.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "support/dead_pid.h"
#include "support/tmp_dir.h"
#include "train/stale_temporaries.h"

namespace fs = std::filesystem;

using tt::test::dead_pid;

TEST_CASE("remove_stale_temporaries: dead processes' checkpoints and links go, everything else stays",
          "[stale_temporaries]") {
  tt::test::TmpDir tmp;
  const std::string run = tmp.path();
  const std::string dead = std::to_string(dead_pid()), live = std::to_string(::getppid());
  fs::create_directories(run + "/checkpoints/step-000010");
  fs::create_directories(run + "/checkpoints/step-000012.tmp." + dead + ".3");  // a checkpoint being written
  std::ofstream(run + "/checkpoints/step-000012.tmp." + dead + ".3/model.safetensors") << "half";
  fs::create_directories(run + "/checkpoints/step-000010.old.tmp." + dead + ".9");  // the replaced one, aside
  fs::create_directories(run + "/checkpoints/step-000014.tmp." + live + ".0");     // a live process's
  fs::create_directory_symlink("checkpoints/step-000012", run + "/last.tmp." + dead + ".4");
  fs::create_directory_symlink("checkpoints/step-000010", run + "/best.tmp." + dead + ".5");
  std::ofstream(run + "/.write-test.tmp." + dead + ".6") << "ok";
  std::ofstream(run + "/notes.tmp." + dead + ".1") << "the user's";  // not a name tt-train writes
  fs::create_directory_symlink("checkpoints/step-000010", run + "/last");

  const auto removed = tt::train::remove_stale_temporaries(run);
  CHECK(removed == std::vector<std::string>{"checkpoints/step-000010.old.tmp." + dead + ".9",
                                            "checkpoints/step-000012.tmp." + dead + ".3",
                                            ".write-test.tmp." + dead + ".6", "best.tmp." + dead + ".5",
                                            "last.tmp." + dead + ".4"});
  std::vector<std::string> left;
  for (const auto& e : fs::recursive_directory_iterator(run)) left.push_back(e.path().lexically_relative(run).string());
  std::sort(left.begin(), left.end());
  CHECK(left == std::vector<std::string>{"checkpoints", "checkpoints/step-000010",
                                         "checkpoints/step-000014.tmp." + live + ".0", "last",
                                         "notes.tmp." + dead + ".1"});
  CHECK(fs::is_directory(run + "/last"));  // a link is removed, not followed: its target stays
  CHECK(tt::train::remove_stale_temporaries(run).empty());
  CHECK(tt::train::remove_stale_temporaries(tmp.file("no-such-run")).empty());
}
