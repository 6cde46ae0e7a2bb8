#include "util/text_io.h"

#include <catch2/catch.hpp>

#include "support/tmp_dir.h"
#include "util/error.h"

using tt::util::is_valid_utf8;

TEST_CASE("LineReader splits at LF only and keeps CR and empty lines", "[util]") {
  tt::test::TmpDir dir;
  auto path = dir.write("a.txt", "one\r\n\nthree");
  auto lines = tt::util::read_lines(path);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "one\r");
  CHECK(lines[1].empty());
  CHECK(lines[2] == "three");
}

TEST_CASE("LineReader names the missing file", "[util]") {
  CHECK_THROWS_WITH(tt::util::LineReader("/nonexistent/x.txt"), Catch::Contains("/nonexistent/x.txt"));
}

TEST_CASE("UTF-8 validation", "[util]") {
  size_t at = 99;
  CHECK(is_valid_utf8("plain ascii"));
  CHECK(is_valid_utf8("Grüße, 世界, 😀"));
  CHECK_FALSE(is_valid_utf8("ab\xff", &at));
  CHECK(at == 2);
  CHECK_FALSE(is_valid_utf8("\xc3", &at));          // truncated
  CHECK_FALSE(is_valid_utf8("\xc0\xaf", &at));      // overlong '/'
  CHECK_FALSE(is_valid_utf8("\xed\xa0\x80", &at));  // surrogate
}
