// tt::Error's option refs: the library names a field, the message reads as that field until a tool names
// its flags, user data beside the refs is never touched, and context added on the way up keeps the refs.
#include <catch2/catch.hpp>

#include "util/error.h"

namespace {

std::string as_flag(const std::string& field) { return field == "max_len" ? "--max-len" : "-X" + field; }

}  // namespace

TEST_CASE("Error: an option ref reads as the bare field until a tool names it", "[error]") {
  using tt::option_ref;
  tt::ConfigError e(option_ref("max_len") + " (0) must be at least 1",
                    "raise " + option_ref("max_len") + " or " + option_ref("d_model"));
  CHECK(std::string(e.what()) == "max_len (0) must be at least 1");
  CHECK(e.hint() == "raise max_len or d_model");
  e.name_options(as_flag);
  CHECK(std::string(e.what()) == "--max-len (0) must be at least 1");
  CHECK(e.hint() == "raise --max-len or -Xd_model");
  const std::runtime_error& base = e;
  CHECK(std::string(base.what()) == "--max-len (0) must be at least 1");
}

TEST_CASE("Error: text beside the refs is never rewritten, braces and field names included", "[error]") {
  tt::FormatError e("'{max_len}' max_len " + tt::option_ref("max_len"), "use {max_len}");
  e.name_options(as_flag);
  CHECK(std::string(e.what()) == "'{max_len}' max_len --max-len");
  CHECK(e.hint() == "use {max_len}");
  tt::Error plain("no refs here", "none");
  plain.name_options(as_flag);
  CHECK(std::string(plain.what()) == "no refs here");
  CHECK(plain.hint() == "none");
}

TEST_CASE("Error: context keeps the refs and the hint, and the type is the caller's", "[error]") {
  const tt::ConfigError inner(tt::option_ref("threads") + " must be at least 1", "pass " + tt::option_ref("threads"));
  tt::FormatError outer("corpus.en:3: ", inner);
  CHECK(std::string(outer.what()) == "corpus.en:3: threads must be at least 1");
  CHECK(outer.hint() == "pass threads");
  outer.name_options(as_flag);
  CHECK(std::string(outer.what()) == "corpus.en:3: -Xthreads must be at least 1");
  CHECK(outer.hint() == "pass -Xthreads");
  const tt::Error twice("a.txt: ", outer);
  CHECK(std::string(twice.what()) == "a.txt: corpus.en:3: threads must be at least 1");
}
