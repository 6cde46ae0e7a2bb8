// tt-train --precision: the header and JSON name the precision and oneDNN's ISA; bf16 trains where the
// processor has bf16 instructions, and is refused in one line (exit 1) where it has not — forced here with
// oneDNN's DNNL_MAX_CPU_ISA cap, so the refusal is tested on any machine; --precision auto takes bf16 where
// it runs and its product timed faster than fp32's (the header gives both times), and fp32 under the cap.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backend/backend.h"
#include "data/spm_fixture.h"
#include "support/run_command.h"
#include "support/tmp_dir.h"
#include "train/precision.h"

using tt::test::quoted;
using tt::test::run_command;
using tt::test::TmpDir;
using tt::test::tool;

namespace {

const std::string tiny_run =
    " --preset tiny --d-model 32 --d-ff 64 --heads 2 --layers 1 --vocab-size 30 --synthetic-steps 2"
    " --batch-size 4 --src-len 6 --tgt-len 6 --threads 1 --device cpu";

bool processor_has_bf16() {
  auto be = tt::backend::make_backend("cpu", 1);
  return be->set_matmul_precision(tt::backend::MatmulPrecision::bf16);
}

// The pick that auto's header line announces, from the two times it gives ("took 6.58 ms in bf16, 3.70 ms in
// fp32"); empty where there is no such line.
std::string announced_pick(const std::string& err) {
  const auto at = err.find("--precision auto: a 1024x512x1024 product took ");
  if (at == std::string::npos) return "";
  double bf16 = 0, fp32 = 0;
  REQUIRE(std::sscanf(err.c_str() + at, "--precision auto: a 1024x512x1024 product took %lf ms in bf16, %lf ms in fp32",
                      &bf16, &fp32) == 2);
  CHECK(bf16 > 0);
  CHECK(fp32 > 0);
  return tt::train::bf16_is_faster(fp32, bf16) ? "bf16" : "fp32";
}

}  // namespace

TEST_CASE("tt-train --precision auto takes bf16 only when its product takes at most 90 percent of fp32 time",
          "[tt-train][bf16]") {
  CHECK(tt::train::bf16_is_faster(3.70, 1.85));       // twice as fast (a Zen 4)
  CHECK(tt::train::bf16_is_faster(1.0, 0.9));         // the margin itself
  CHECK_FALSE(tt::train::bf16_is_faster(1.0, 0.95));  // within timer noise: the more precise one
  CHECK_FALSE(tt::train::bf16_is_faster(3.70, 6.58)); // slower (a Xeon without AMX)
}

TEST_CASE("tt-train names fp32 and oneDNN's ISA in its header and JSON by default", "[tt-train][bf16]") {
  auto r = run_command(tool("tt-train") + tiny_run);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.err, Catch::Contains("fp32 matmuls (oneDNN "));
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["precision"] == "fp32");
  CHECK_FALSE(j["matmul_isa"].get<std::string>().empty());
}

TEST_CASE("tt-train --precision bf16 trains where bf16 instructions exist", "[tt-train][bf16]") {
  if (!processor_has_bf16()) {
    WARN("no bf16 instructions on this processor: only the refusal is tested");
    return;
  }
  auto r = run_command(tool("tt-train") + tiny_run + " --precision bf16");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["precision"] == "bf16");
  const std::string isa = j["matmul_isa"];
  CHECK((isa == "avx512_core_bf16" || isa == "avx512_core_amx"));
  CHECK_THAT(r.err, Catch::Contains("bf16 matmuls (oneDNN " + isa + ")"));
  CHECK(j["last_loss"].get<double>() > 0);
}

TEST_CASE("tt-train --precision bf16 refuses in one line without bf16 instructions", "[tt-train][bf16]") {
  // avx512_core_vnni: the best ISA without bf16 (a lower machine caps lower by itself).
  auto r = run_command("DNNL_MAX_CPU_ISA=AVX512_CORE_VNNI " + tool("tt-train") + tiny_run + " --precision bf16");
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, Catch::StartsWith("tt-train: error: --precision bf16 is not available on cpu") &&
                        Catch::Contains("oneDNN ISA") && Catch::Contains("use --precision fp32"));
  // The cap worked: the ISA named is not a bf16 one.
  CHECK_THAT(r.err, !Catch::Contains("ISA avx512_core_bf16") && !Catch::Contains("ISA avx512_core_amx"));
  // fp32 still runs under the same cap.
  r = run_command("DNNL_MAX_CPU_ISA=AVX512_CORE_VNNI " + tool("tt-train") + tiny_run);
  CHECK(r.status == 0);
}

TEST_CASE("tt-train --precision auto picks bf16 where it runs faster and fp32 elsewhere, and says why",
          "[tt-train][bf16]") {
  auto r = run_command(tool("tt-train") + tiny_run + " --precision auto");
  REQUIRE(r.status == 0);
  // With bf16 instructions the pick follows the two times the header gives; without, fp32 and no timing.
  const std::string picked = announced_pick(r.err);
  if (processor_has_bf16()) CHECK_FALSE(picked.empty());
  else CHECK(picked.empty());
  const std::string expected = picked.empty() ? "fp32" : picked;
  CHECK(nlohmann::json::parse(r.out)["precision"] == expected);
  CHECK_THAT(r.err, Catch::Contains(expected + " matmuls (oneDNN "));
  // -q keeps the timing line off stderr, not the pick.
  r = run_command(tool("tt-train") + tiny_run + " --precision auto -q");
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  // Capped below bf16, where --precision bf16 is refused (the case above), auto trains in fp32.
  r = run_command("DNNL_MAX_CPU_ISA=AVX512_CORE_VNNI " + tool("tt-train") + tiny_run + " --precision auto");
  REQUIRE(r.status == 0);
  CHECK(nlohmann::json::parse(r.out)["precision"] == "fp32");
  CHECK_THAT(r.err, Catch::Contains("fp32 matmuls (oneDNN ") && !Catch::Contains("auto"));
}

TEST_CASE("tt-train --precision auto on a corpus: the run's start record names the precision picked", "[tt-train][bf16]") {
  TmpDir dir;
  const std::string spm = tt::test::train_fixture_model(dir);
  const std::string corpus = " --preset tiny --d-model 32 --d-ff 64 --heads 2 --layers 1 --train " +
                             quoted(tt::test::fixture_path("corpus.en")) + " " +
                             quoted(tt::test::fixture_path("corpus.de")) + " --spm " + quoted(spm) +
                             " --batch-tokens 150 --threads 1 --device cpu --max-steps 1 --precision auto -o ";
  std::string err;
  auto start_record = [&](const std::string& env, const std::string& run) {
    const auto r = run_command(env + tool("tt-train") + corpus + quoted(dir.file(run)));
    REQUIRE(r.status == 0);
    err = r.err;
    std::istringstream log(tt::test::read_file(dir.file(run) + "/log.jsonl"));
    std::string first;
    std::getline(log, first);
    const auto j = nlohmann::json::parse(first);
    CHECK(j["type"] == "start");
    return j["precision"].get<std::string>();
  };
  const std::string native = start_record("", "native");
  CHECK(native == (processor_has_bf16() ? announced_pick(err) : "fp32"));
  CHECK(start_record("DNNL_MAX_CPU_ISA=AVX512_CORE_VNNI ", "capped") == "fp32");
  CHECK(announced_pick(err).empty());
}
