#include "util/atomic_file.h"

#include <catch2/catch.hpp>
#include <filesystem>

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
