// --device on a GPU host, end to end through the tools: auto picks CUDA and the header names the GPU,
// tt-translate runs on CUDA although its products cannot be batch-invariant there (and says so), cuda:N
// selects GPU N, an index past the last GPU or int8 products stop with one message (exit 1), and an int8
// model file runs at float32.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "cuda/cuda_fixture.h"
#include "support/run_command.h"

using namespace tt;
using namespace tt::test;

namespace {

const char* kTinyModel = " --preset tiny --layers 1 --d-model 32 --d-ff 64 --heads 2 --vocab-size 24";

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("cuda --device auto: tt-train and tt-translate run on the GPU and their headers say so", "[cuda]") {
  require_cuda();
  TmpDir dir;
  const std::string model = dir.file("model");
  // Made on the CPU, translated on the GPU: the model directory does not depend on the device.
  auto r = run_command(tool("tt-train") + kTinyModel + " --synthetic-steps 1 --batch-size 2 --src-len 4 --tgt-len 4"
                       " --device cpu --quiet -o " + quoted(model));
  REQUIRE(r.status == 0);

  r = run_command(tool("tt-train") + kTinyModel + " --synthetic-steps 2 --batch-size 2 --src-len 4 --tgt-len 4");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(contains(r.err, "parameters on cuda:0 ("));
  CHECK(contains(r.out, "\"device\":\"cuda:0 ("));

  const std::string translate = tool("tt-translate") + " -m " + quoted(model) +
                                " --input-format ids --output-format ids --max-len-b 3";
  r = run_command(translate, "5 6 7\n\n8 9\n");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 3);
  CHECK(contains(r.err, "tt-translate: cuda:0 ("));
  CHECK_FALSE(contains(r.err, "batch-invariant"));
  CHECK(contains(r.err, "outputs may depend on --batch-size"));

  // No int8 products on CUDA: refused with the option named, never run in fp32 in its place.
  r = run_command(translate + " --compute-type int8", "5 6 7\n");
  CHECK(r.status == 1);
  CHECK(contains(r.err, "--compute-type int8 is not available on cuda:0"));
  CHECK(r.out.empty());
  // An int8 model file, whose type is the default, runs there dequantized at float32, with a note.
  r = run_command(tool("tt-convert") + " quantize " + quoted(model) + " -o " + quoted(dir.file("m8")) + " --type int8");
  REQUIRE(r.status == 0);
  r = run_command(tool("tt-translate") + " -m " + quoted(dir.file("m8")) +
                  " --input-format ids --output-format ids --max-len-b 3", "5 6 7\n");
  CHECK(r.status == 0);
  CHECK(contains(r.err, "running the int8 model at float32"));
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);

  const int count = backend::cuda_device_count();
  r = run_command(translate + " --device cuda:" + std::to_string(count), "5 6 7\n");
  CHECK(r.status == 1);
  CHECK(contains(r.err, "cuda:" + std::to_string(count) + " does not exist"));
  if (count > 1) {  // a second GPU: cuda:1 is that one
    r = run_command(translate + " --device cuda:1", "5 6 7\n");
    CHECK(r.status == 0);
    CHECK(contains(r.err, "tt-translate: cuda:1 ("));
  }
}
