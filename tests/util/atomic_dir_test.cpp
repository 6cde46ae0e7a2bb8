// AtomicDirectory: a directory appears complete or not at all, and an old one survives until the new one is.
#include <catch2/catch.hpp>
#include <filesystem>

#include "support/tmp_dir.h"
#include "util/atomic_dir.h"
#include "util/error.h"

namespace fs = std::filesystem;
using tt::test::TmpDir;

namespace {
std::string slurp(const std::string& path) { return tt::test::read_file(path); }
size_t entries(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}
}  // namespace

TEST_CASE("AtomicDirectory: nothing at the target until commit, then everything", "[util][atomic_dir]") {
  TmpDir tmp;
  const std::string target = tmp.file("model");
  {
    tt::util::AtomicDirectory dir(target);
    std::ofstream(dir.file("a.txt")) << "alpha";
    CHECK_FALSE(fs::exists(target));
    dir.commit();
  }
  CHECK(slurp(target + "/a.txt") == "alpha");
  CHECK(entries(tmp.path()) == 1);  // no temporary left beside it
}

TEST_CASE("AtomicDirectory: an uncommitted directory leaves no trace and the old one intact", "[util][atomic_dir]") {
  TmpDir tmp;
  const std::string target = tmp.file("model");
  fs::create_directory(target);
  std::ofstream(target + "/old.txt") << "old";
  {
    tt::util::AtomicDirectory dir(target);
    std::ofstream(dir.file("new.txt")) << "new";
  }  // e.g. an exception while saving
  CHECK(slurp(target + "/old.txt") == "old");
  CHECK_FALSE(fs::exists(target + "/new.txt"));
  CHECK(entries(tmp.path()) == 1);
}

TEST_CASE("AtomicDirectory: commit replaces an existing directory whole", "[util][atomic_dir]") {
  TmpDir tmp;
  const std::string target = tmp.file("nested/model/");
  fs::create_directories(target);
  std::ofstream(target + "old.txt") << "old";
  tt::util::AtomicDirectory dir(target);
  std::ofstream(dir.file("new.txt")) << "new";
  dir.commit();
  CHECK_FALSE(fs::exists(target + "old.txt"));
  CHECK(slurp(target + "new.txt") == "new");
  CHECK(entries(tmp.file("nested")) == 1);
}

TEST_CASE("AtomicDirectory: a target that appears while writing is never replaced", "[util][atomic_dir]") {
  TmpDir tmp;
  const std::string target = tmp.file("model");
  {
    tt::util::AtomicDirectory dir(target);
    std::ofstream(dir.file("new.txt")) << "new";
    fs::create_directory(target);  // someone else's, made meanwhile
    std::ofstream(target + "/theirs.txt") << "theirs";
    CHECK_THROWS_WITH(dir.commit(), Catch::Contains(target) && Catch::Contains("appeared"));
    CHECK(entries(target) == 1);
    CHECK(slurp(target + "/theirs.txt") == "theirs");
  }
  CHECK(entries(tmp.path()) == 1);  // our temporary is gone
  // A target that existed and went away meanwhile is simply created.
  fs::create_directory(tmp.file("gone"));
  tt::util::AtomicDirectory dir(tmp.file("gone"));
  std::ofstream(dir.file("a.txt")) << "a";
  fs::remove(tmp.file("gone"));
  dir.commit();
  CHECK(slurp(tmp.file("gone/a.txt")) == "a");
}

TEST_CASE("AtomicDirectory: an unwritable parent is an IoError naming it", "[util][atomic_dir]") {
  if (::geteuid() == 0) {
    // root writes anywhere; use a path under a regular file instead
    TmpDir tmp;
    const std::string file = tmp.write("plain", "x");
    CHECK_THROWS_AS(tt::util::AtomicDirectory(file + "/model"), tt::IoError);
    return;
  }
  CHECK_THROWS_AS(tt::util::AtomicDirectory("/proc/tt-test-model"), tt::IoError);
}

TEST_CASE("AtomicDirectory through a symlink replaces the directory it names and keeps the link", "[util][atomic_dir]") {
  TmpDir tmp;
  fs::create_directory(tmp.file("real"));
  std::ofstream(tmp.file("real/old.txt")) << "old";
  fs::create_symlink("real", tmp.file("link"));
  tt::util::AtomicDirectory dir(tmp.file("link"));
  std::ofstream(dir.file("new.txt")) << "new";
  dir.commit();
  CHECK(fs::is_symlink(fs::symlink_status(tmp.file("link"))));
  CHECK(slurp(tmp.file("real/new.txt")) == "new");
  CHECK_FALSE(fs::exists(tmp.file("real/old.txt")));
}

TEST_CASE("AtomicDirectory refuses a target that is not a directory, and leaves it as it was", "[util][atomic_dir]") {
  TmpDir tmp;
  const std::string file = tmp.write("model", "a file");
  CHECK_THROWS_WITH(tt::util::AtomicDirectory(file), Catch::Contains(file) && Catch::Contains("not a directory"));
  CHECK(slurp(file) == "a file");
  const std::string device_link = tmp.file("null");
  fs::create_symlink("/dev/null", device_link);
  CHECK_THROWS_WITH(tt::util::AtomicDirectory(device_link), Catch::Contains("not a directory"));
  CHECK(fs::is_symlink(fs::symlink_status(device_link)));
  CHECK(entries(tmp.path()) == 2);  // no temporary left
}
