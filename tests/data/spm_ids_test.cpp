// Id lines as tt-tokenize decode --format id reads them.
#include <catch2/catch.hpp>

#include "data/spm_ids.h"
#include "util/error.h"

using tt::data::parse_id_line;

TEST_CASE("id lines: spaces, CRLF, and bad tokens shown with their control characters", "[data]") {
  std::vector<int> ids{99};
  parse_id_line("", ids);
  CHECK(ids.empty());
  parse_id_line("  5 6   7 ", ids);
  CHECK(ids == std::vector<int>{5, 6, 7});
  parse_id_line("5 6\r", ids);  // a CRLF file
  CHECK(ids == std::vector<int>{5, 6});
  parse_id_line("-3 2147483647", ids);  // range checks belong to the model (decode_ids)
  CHECK(ids == std::vector<int>{-3, 2147483647});
  CHECK_THROWS_WITH(parse_id_line("5\r 6", ids), Catch::Equals("'5\\r' is not an id"));
  CHECK_THROWS_WITH(parse_id_line("5 x\x01", ids), Catch::Equals("'x\\x01' is not an id"));
  CHECK_THROWS_WITH(parse_id_line("1\t2", ids), Catch::Equals("'1\\t2' is not an id"));
  CHECK_THROWS_AS(parse_id_line("2147483648", ids), tt::FormatError);  // out of int range
  CHECK_THROWS_AS(parse_id_line("+5", ids), tt::FormatError);
  CHECK(tt::data::split_tokens(" a  b ") == std::vector<std::string>{"a", "b"});
}
