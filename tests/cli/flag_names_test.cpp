// FlagNames: a tool's own flag definitions name the library's option fields in its messages.
#include <catch2/catch.hpp>

#include "cli/flag_names.h"

TEST_CASE("FlagNames: each long flag names its field, extra names the differently spelled ones", "[cli]") {
  CLI::App app;
  int n = 0;
  app.add_option("-l,--max-len", n);
  app.add_option("--time-limit", n);
  app.add_flag("-q,--quiet");
  const tt::cli::FlagNames names(app, {{"time_limit_s", "--time-limit"}, {"inputs", "--input"}});
  CHECK(names("max_len") == "--max-len");
  CHECK(names("quiet") == "--quiet");
  CHECK(names("time_limit_s") == "--time-limit");
  CHECK(names("inputs") == "--input");
  CHECK(names("d_model") == "d_model");  // no flag: the field
  CHECK(names("l") == "l");              // short names are not fields
}

TEST_CASE("with_flag_names: an escaping tt::Error names the flags, keeping its type", "[cli]") {
  CLI::App app;
  int n = 0;
  app.add_option("--accum", n);
  const tt::cli::FlagNames names(app);
  try {
    tt::cli::with_flag_names(names, []() -> int { throw tt::ConfigError(tt::option_ref("accum") + " (0) must be at least 1"); });
    FAIL("no exception");
  } catch (const tt::ConfigError& e) {
    CHECK(std::string(e.what()) == "--accum (0) must be at least 1");
  }
  CHECK(tt::cli::with_flag_names(names, [] { return 7; }) == 7);
}
