#include "util/atomic_file.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <thread>

#include "support/tmp_dir.h"

TEST_CASE("AtomicFile writes only on commit", "[util]") {
  tt::test::TmpDir dir;
  auto target = dir.file("model.bin");
  {
    tt::util::AtomicFile f(target);
    f.stream() << "half";
    CHECK_FALSE(std::filesystem::exists(target));
  }  // destroyed without commit: nothing left behind
  CHECK_FALSE(std::filesystem::exists(target));
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 0);

  tt::util::AtomicFile f(target);
  f.stream() << "whole";
  f.commit();
  CHECK(tt::test::read_file(target) == "whole");
}

TEST_CASE("AtomicFile into a missing directory is a clear error", "[util]") {
  CHECK_THROWS_WITH(tt::util::AtomicFile("/nonexistent-dir/x"), Catch::Contains("/nonexistent-dir/x"));
}

// What the path names is written, as a shell's `>` would: the link stays a link, a FIFO or a device is
// written through in place. (The device cases go through a link in the test's own directory, so that a
// regression replaces the link, never the device itself.)
TEST_CASE("AtomicFile through a symlink replaces the file it names and keeps the link", "[util]") {
  tt::test::TmpDir dir;
  const auto real = dir.write("real.html", "old");
  const auto link = dir.file("link.html");
  std::filesystem::create_symlink("real.html", link);
  tt::util::AtomicFile f(link);
  f.stream() << "new";
  f.commit();
  CHECK(std::filesystem::is_symlink(std::filesystem::symlink_status(link)));
  CHECK(tt::test::read_file(real) == "new");
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 2);  // no temporary left
}

TEST_CASE("AtomicFile writes through to a FIFO and leaves it a FIFO", "[util]") {
  tt::test::TmpDir dir;
  const auto fifo = dir.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] { received = tt::test::read_file(fifo); });
  {
    tt::util::AtomicFile f(fifo);
    f.stream() << "page";
    f.commit();
  }
  reader.join();
  CHECK(received == "page");
  CHECK(std::filesystem::is_fifo(std::filesystem::symlink_status(fifo)));
}

TEST_CASE("AtomicFile to a device writes to it and reports its errors, never replacing it", "[util]") {
  tt::test::TmpDir dir;
  const auto null_link = dir.file("null");
  std::filesystem::create_symlink("/dev/null", null_link);
  {
    tt::util::AtomicFile f(null_link);
    f.stream() << "discarded";
    f.commit();
  }
  CHECK(std::filesystem::is_symlink(std::filesystem::symlink_status(null_link)));
  CHECK(std::filesystem::is_character_file(std::filesystem::status("/dev/null")));

  const auto full_link = dir.file("full");
  std::filesystem::create_symlink("/dev/full", full_link);
  tt::util::AtomicFile f(full_link);
  f.stream() << std::string(1 << 16, 'x');
  CHECK_THROWS_WITH(f.commit(), Catch::Contains(full_link) && Catch::Contains("No space left on device"));
  CHECK(std::filesystem::is_symlink(std::filesystem::symlink_status(full_link)));
}

TEST_CASE("AtomicFile refuses a directory as its target", "[util]") {
  tt::test::TmpDir dir;
  CHECK_THROWS_WITH(tt::util::AtomicFile(dir.path()), Catch::Contains("is a directory"));
}

TEST_CASE("follow_symlinks resolves chains relative to each link and stops at a loop", "[util]") {
  tt::test::TmpDir dir;
  std::filesystem::create_directory(dir.file("sub"));
  std::filesystem::create_symlink("sub/b", dir.file("a"));
  std::filesystem::create_symlink("c", dir.file("sub/b"));
  CHECK(tt::util::follow_symlinks(dir.file("a")) == dir.file("sub/c"));  // dangling end: where `>` would write
  std::filesystem::create_symlink("loop2", dir.file("loop1"));
  std::filesystem::create_symlink("loop1", dir.file("loop2"));
  CHECK_THROWS_WITH(tt::util::follow_symlinks(dir.file("loop1")), Catch::Contains("too many levels"));
}
