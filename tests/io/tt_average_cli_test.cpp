// tt-average through a shell, as a user runs it: named directories, --last / --best from a run directory,
// what it says on stderr (and -q), and the exit codes of bad flags (2) and bad inputs (1).
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/average_fixture.h"
#include "io/safetensors.h"
#include "support/run_command.h"
#include "support/tmp_dir.h"

namespace fs = std::filesystem;
using tt::test::quoted;
using tt::test::run_command;
using tt::test::tool;

namespace {

// run/checkpoints/step-000100 ... with encoder.bias[0] = step / 100, and a log whose BLEU ranks them
// 300 > 400 > 100 = 200 (a tie; step 500 was validated but has been deleted).
std::string make_run(const tt::test::TmpDir& tmp) {
  tt::test::FakeModel m;
  const std::vector<std::pair<int, double>> steps{{100, 20.0}, {200, 20.0}, {300, 30.0}, {400, 25.0}};
  std::string log = R"({"type":"train","step":10,"loss":6.1})" "\n";
  for (const auto& [step, bleu] : steps) {
    char name[32];
    std::snprintf(name, sizeof name, "checkpoints/step-%06d", step);
    m.bias = {float(step / 100), 0, 0};
    m.write(tmp.file(std::string("run/") + name));
    log += nlohmann::json{{"type", "valid"}, {"step", step}, {"bleu", bleu}, {"checkpoint", name}}.dump() + "\n";
  }
  log += R"({"type":"valid","step":500,"bleu":99.0,"checkpoint":"checkpoints/step-000500"})" "\n";
  tmp.write("run/log.jsonl", log);
  return tmp.file("run");
}

float first_bias(const std::string& dir) {
  return tt::io::SafetensorsReader(dir + "/model.safetensors").read_f32("encoder.bias")[0];
}

}  // namespace

TEST_CASE("tt-average DIR... -o OUT averages and lists the sources on stderr", "[tt-average]") {
  tt::test::TmpDir tmp;
  const std::string run = make_run(tmp);
  const std::string a = run + "/checkpoints/step-000100", b = run + "/checkpoints/step-000400";
  auto r = run_command(tool("tt-average") + " " + quoted(a) + " " + quoted(b + "/") + " -o " + quoted(tmp.file("avg")));
  REQUIRE(r.status == 0);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("averaged 2 checkpoints") && Catch::Contains(a) && Catch::Contains(b) &&
                        Catch::Contains("spm.model"));
  CHECK(first_bias(tmp.file("avg")) == 2.5f);  // (1 + 4) / 2
  CHECK(fs::exists(tmp.file("avg/spm.model")));
  CHECK_FALSE(fs::exists(tmp.file("avg/optimizer.safetensors")));

  // An existing output needs --force; -q says nothing.
  r = run_command(tool("tt-average") + " -q " + quoted(a) + " -o " + quoted(tmp.file("avg")));
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("already exists") && Catch::Contains("--force"));
  CHECK(first_bias(tmp.file("avg")) == 2.5f);
  r = run_command(tool("tt-average") + " -q --force " + quoted(a) + " -o " + quoted(tmp.file("avg")));
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(first_bias(tmp.file("avg")) == 1.0f);
}

TEST_CASE("tt-average --last N and --best N select from a run directory", "[tt-average]") {
  tt::test::TmpDir tmp;
  const std::string run = make_run(tmp);
  auto r = run_command(tool("tt-average") + " --last 2 " + quoted(run) + " -o " + quoted(tmp.file("last")));
  REQUIRE(r.status == 0);
  CHECK(first_bias(tmp.file("last")) == 3.5f);  // steps 300 and 400
  CHECK_THAT(r.err, Catch::Contains("step-000300") && Catch::Contains("step-000400") &&
                        !Catch::Contains("step-000200"));

  r = run_command(tool("tt-average") + " --best 3 " + quoted(run) + " -o " + quoted(tmp.file("best")));
  REQUIRE(r.status == 0);
  CHECK(first_bias(tmp.file("best")) == 3.0f);  // 300, 400, and 200 (ties with 100, later wins): 9 / 3
  CHECK_THAT(r.err, Catch::Contains("step-000300  (bleu 30.00)") && Catch::Contains("step-000200") &&
                        !Catch::Contains("step-000100") && Catch::Contains("no longer exists"));
  auto meta = tt::io::SafetensorsReader(tmp.file("best/model.safetensors")).metadata();
  CHECK(nlohmann::json::parse(meta.at("averaged_from")).size() == 3);

  r = run_command(tool("tt-average") + " --last 9 " + quoted(run) + " -o " + quoted(tmp.file("all")));
  REQUIRE(r.status == 0);
  CHECK_THAT(r.err, Catch::Contains("note: only 4"));
  CHECK(first_bias(tmp.file("all")) == 2.5f);

  r = run_command(tool("tt-average") + " -q --best 1 --log " + quoted(tmp.write("v.jsonl", R"({"type":"valid","step":100,"bleu":1})" "\n")) +
                  " " + quoted(run) + " -o " + quoted(tmp.file("one")));
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  CHECK(first_bias(tmp.file("one")) == 1.0f);
}

TEST_CASE("tt-average: bad flags exit 2, bad inputs exit 1 naming the file and tensor", "[tt-average]") {
  tt::test::TmpDir tmp;
  const std::string run = make_run(tmp);
  const std::string out = " -o " + quoted(tmp.file("out"));
  auto with_run = [&](std::string flags) { return flags.append(quoted(run)).append(out); };
  const std::vector<std::string> bad_usages{
      with_run(" --last 0 "), with_run(" --last 2 --best 2 "), with_run(" --last 2 " + quoted(run) + " "),
      out,                                                       // no DIR
      std::string(" ").append(quoted(run + "/checkpoints/step-000100")),  // no -o
      with_run(" --log x.jsonl --last 2 "), with_run(" --last two ")};
  for (const auto& args : bad_usages) {
    INFO(args);
    auto r = run_command(tool("tt-average") + args);
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Catch::Contains("tt-average: error:"));
  }

  auto r = run_command(tool("tt-average") + " " + quoted(tmp.file("missing")) + out);
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains(tmp.file("missing")));
  r = run_command(tool("tt-average") + " --last 2 " + quoted(tmp.file("missing")) + out);
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("no checkpoints folder"));

  tt::test::FakeModel other;
  other.bias_shape = {1, 3};
  const std::string bad = other.write(tmp.file("bad"));
  r = run_command(tool("tt-average") + " " + quoted(run + "/checkpoints/step-000100") + " " + quoted(bad) + out);
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains(bad + "/model.safetensors") && Catch::Contains("'encoder.bias'"));
  CHECK_FALSE(fs::exists(tmp.file("out")));
}

TEST_CASE("tt-average refuses to write inside a run's checkpoints folder, where it would pass for a checkpoint",
          "[tt-average]") {
  tt::test::TmpDir tmp;
  const std::string run = make_run(tmp);
  for (const std::string& out : {run + "/checkpoints/step-000999", run + "/./checkpoints/avg"}) {
    auto r = run_command(tool("tt-average") + " --last 2 " + quoted(run) + " -o " + quoted(out));
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Catch::Contains(out) && Catch::Contains("checkpoints/"));
    CHECK_FALSE(std::filesystem::exists(out));
  }
  auto r = run_command(tool("tt-average") + " --last 2 " + quoted(run) + " -o " + quoted(run + "/average"));
  CHECK(r.status == 0);  // beside the checkpoints is fine
  r = run_command(tool("tt-average") + " --last 2 " + quoted(run) + " -o " + quoted(tmp.file("next")));
  CHECK_THAT(r.err, Catch::Contains("step-000300") && Catch::Contains("step-000400"));
}
