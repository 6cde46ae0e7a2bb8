// The run log after a crash mid-record: the partial last line is cut off, so the next record starts a
// line of its own and every line stays JSON.
#include <catch2/catch.hpp>
#include <string>

#include "support/tmp_dir.h"
#include "train/run_log.h"

using tt::test::read_file;

TEST_CASE("drop_partial_last_line: cuts after the last newline, leaves a whole log alone", "[run_log]") {
  tt::test::TmpDir tmp;
  using tt::train::drop_partial_last_line;
  CHECK(drop_partial_last_line(tmp.file("missing.jsonl")) == 0);
  CHECK(drop_partial_last_line(tmp.write("empty.jsonl", "")) == 0);
  const std::string whole = "{\"type\":\"start\"}\n{\"type\":\"train\",\"step\":1}\n";
  CHECK(drop_partial_last_line(tmp.write("whole.jsonl", whole)) == 0);
  CHECK(read_file(tmp.file("whole.jsonl")) == whole);

  CHECK(drop_partial_last_line(tmp.write("cut.jsonl", whole + "{\"type\":\"tr")) == 11);
  CHECK(read_file(tmp.file("cut.jsonl")) == whole);
  CHECK(drop_partial_last_line(tmp.write("one.jsonl", "{\"type\":\"st")) == 11);  // no whole line at all
  CHECK(read_file(tmp.file("one.jsonl")).empty());
  // A partial line longer than one read: the newline is found further back.
  const std::string long_tail = "{\"type\":\"start\",\"options\":\"" + std::string(10000, 'x');
  CHECK(drop_partial_last_line(tmp.write("long.jsonl", whole + long_tail)) == static_cast<int64_t>(long_tail.size()));
  CHECK(read_file(tmp.file("long.jsonl")) == whole);
}

TEST_CASE("RunLog: a log reopened after a crash mid-record continues on a line of its own", "[run_log]") {
  tt::test::TmpDir tmp;
  const std::string path = tmp.write("log.jsonl", "{\"a\":1}\n{\"b\":");
  {
    tt::train::RunLog log(path);
    CHECK(log.dropped_bytes() == 5);
    log.write({{"c", 3}});
  }
  CHECK(read_file(path) == "{\"a\":1}\n{\"c\":3}\n");
  tt::train::RunLog again(path);
  CHECK(again.dropped_bytes() == 0);
}
