// Checkpoint averaging: hand-computed means (summed in double), every mismatch refused naming the file and
// the tensor or key, metadata and vocabulary in the output, atomic output, and checkpoint selection from a
// run directory's log.jsonl.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "io/average.h"
#include "io/average_fixture.h"
#include "io/checkpoint_selection.h"
#include "io/model_dir.h"
#include "io/safetensors.h"
#include "nn/config.h"
#include "nn/transformer.h"
#include "support/tmp_dir.h"
#include "util/error.h"

namespace fs = std::filesystem;
using tt::io::StDType;
using tt::test::FakeModel;
using tt::test::tiny_config;

namespace {

std::vector<std::string> three_models(const tt::test::TmpDir& tmp) {
  FakeModel m;
  std::vector<std::string> dirs;
  for (int i = 1; i <= 3; ++i) {
    m.weight = {float(i), float(10 * i), -float(i), 0.5f};
    m.bias = {float(i), 0, 100};
    dirs.push_back(m.write(tmp.file("ckpt" + std::to_string(i))));
  }
  return dirs;
}

// Paths in and under `dir`, to show that a failure leaves no temporary behind.
std::vector<std::string> listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir)) names.push_back(e.path().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("averaging three checkpoints gives the element-wise mean", "[average]") {
  tt::test::TmpDir tmp;
  const auto dirs = three_models(tmp);
  const std::string out = tmp.file("avg");
  const auto result = tt::io::average_model_dirs(out, dirs);
  CHECK(result.tensors == 2);
  CHECK(result.parameters == 7);
  CHECK(result.vocab_files == std::vector<std::string>{"spm.model"});

  tt::io::SafetensorsReader r(out + "/model.safetensors");
  CHECK(r.read_f32("encoder.weight") == std::vector<float>{2, 20, -2, 0.5f});  // (1+2+3)/3, (10+20+30)/3, ...
  CHECK(r.read_f32("encoder.bias") == std::vector<float>{2, 0, 100});
  CHECK(r.tensors()[0].name == "encoder.weight");  // the first source's order
  const auto from = nlohmann::json::parse(r.metadata().at("averaged_from"));
  CHECK(from == nlohmann::json(dirs));
  CHECK(r.metadata().count("tt_average") == 1);

  CHECK(tt::test::read_file(out + "/config.json") == tt::test::read_file(dirs[0] + "/config.json"));
  CHECK(tt::test::read_file(out + "/spm.model") == "spm bytes");
  CHECK_FALSE(fs::exists(out + "/optimizer.safetensors"));
  CHECK(listing(tmp.path()).size() == 3 * 5 + 1 + 3);  // 3 sources (dir + 4 files), avg (dir + 3), no temporaries
  // The output is a model directory tt can load.
  nlohmann::json full;
  CHECK(tt::nn::to_json(tt::io::load_model_config(out, &full)) == tt::nn::to_json(tiny_config()));
  CHECK(full["train"]["lr"] == 0.5);
}

TEST_CASE("averaging sums in double: float accumulation would round differently", "[average]") {
  // 2^24 + 1 + 1: in float the 1s vanish (2^24 + 1 rounds to 2^24), giving 2^24/3 = 5592405.33 -> 5592405.5;
  // in double the sum is exact, 16777218 / 3 = 5592406.
  tt::test::TmpDir tmp;
  FakeModel m;
  std::vector<std::string> dirs;
  for (float v : {16777216.0f, 1.0f, 1.0f}) {
    m.weight = {v, v, v, v};
    dirs.push_back(m.write(tmp.file(std::string("c").append(std::to_string(dirs.size())))));
  }
  float in_float = 0;
  for (float v : {16777216.0f, 1.0f, 1.0f}) in_float += v;
  REQUIRE(in_float / 3 != 5592406.0f);  // the case really separates the two
  tt::io::average_model_dirs(tmp.file("avg"), dirs);
  CHECK(tt::io::SafetensorsReader(tmp.file("avg/model.safetensors")).read_f32("encoder.weight") ==
        std::vector<float>(4, 5592406.0f));
}

TEST_CASE("averaging real Transformer model directories", "[average]") {
  auto backend = tt::backend::make_backend("cpu", 1);
  auto config = tiny_config();
  config.d_model = 16, config.d_ff = 32, config.heads = 2, config.n_layers_enc = config.n_layers_dec = 1;
  config.vocab_size_src = config.vocab_size_tgt = 12;
  tt::test::TmpDir tmp;
  std::vector<std::string> dirs;
  std::vector<std::vector<float>> values;
  for (uint64_t seed : {1, 2}) {
    tt::nn::Transformer model(config, *backend);
    model.init_parameters(seed);
    dirs.push_back(tmp.file(std::string("m").append(std::to_string(seed))));
    tt::io::save_model_dir(dirs.back(), config, model.params(), {{"vocab", {{"source", "a.model"}, {"target", "b.model"}}}});
    std::ofstream(dirs.back() + "/a.model") << "source spm";
    std::ofstream(dirs.back() + "/b.model") << "target spm";
    values.push_back(model.params().values().to_host_f32());
  }
  const auto result = tt::io::average_model_dirs(tmp.file("avg"), dirs);
  CHECK(result.parameters == config.parameter_count());
  CHECK(result.vocab_files == std::vector<std::string>{"a.model", "b.model"});
  CHECK(tt::test::read_file(tmp.file("avg/b.model")) == "target spm");

  tt::nn::Transformer averaged(config, *backend);
  tt::io::load_model_weights(tmp.file("avg"), averaged.params());
  const auto mean = averaged.params().values().to_host_f32();
  for (const auto& p : averaged.params().all())
    for (int64_t k = 0; k < p.shape.numel(); ++k) {
      const size_t i = static_cast<size_t>(p.offset + k);
      REQUIRE(mean[i] == static_cast<float>((double(values[0][i]) + double(values[1][i])) / 2));
    }
}

TEST_CASE("sources that differ are refused, naming the file and the tensor or key", "[average]") {
  tt::test::TmpDir tmp;
  FakeModel good;
  const std::string a = good.write(tmp.file("a"));
  FakeModel bad;
  std::string expect_file = tmp.file("b/model.safetensors"), expect_what;
  SECTION("a tensor missing") {
    bad.bias_name = "encoder.bias2";
    expect_what = "'encoder.bias'";
  }
  SECTION("a shape") {
    bad.bias = {0, 0, 0, 0};
    bad.bias_shape = {4};
    expect_what = "'encoder.bias' is F32 [4], but F32 [3]";
  }
  SECTION("a dtype") {
    bad.bias_dtype = StDType::i32;
    expect_what = "'encoder.bias' is I32 [3], but F32 [3]";
  }
  SECTION("the architecture") {
    bad.config.d_ff = 512;
    expect_file = tmp.file("b/config.json");
    expect_what = "model.d_ff is 512, but 256";
  }
  SECTION("the vocabulary file") {
    bad.spm = "other spm";
    expect_file = tmp.file("b/spm.model");
    expect_what = "differs from " + tmp.file("a/spm.model");
  }
  SECTION("the vocabulary section") {
    bad.vocab = {{"source", "spm.model"}, {"target", "de.model"}};
    expect_file = tmp.file("b/config.json");
    expect_what = "\"vocab\"";
  }
  const std::string b = bad.write(tmp.file("b"));
  const auto before = listing(tmp.path());
  CHECK_THROWS_AS(tt::io::average_model_dirs(tmp.file("avg"), {a, b}), tt::FormatError);
  CHECK_THROWS_WITH(tt::io::average_model_dirs(tmp.file("avg"), {a, b}),
                    Catch::Contains(expect_file) && Catch::Contains(expect_what));
  CHECK(listing(tmp.path()) == before);  // nothing written, no temporary left
}

TEST_CASE("an extra tensor and non-F32 or non-finite weights are refused", "[average]") {
  tt::test::TmpDir tmp;
  FakeModel m;
  const std::string a = m.write(tmp.file("a"));
  SECTION("extra tensor in the second source") {
    const std::string b = m.write(tmp.file("b"));
    std::vector<float> w(4, 0), extra{1};
    tt::io::write_safetensors(b + "/model.safetensors", {{"encoder.weight", StDType::f32, {2, 2}, w.data()},
                                                         {"encoder.bias", StDType::f32, {3}, w.data()},
                                                         {"decoder.extra", StDType::f32, {1}, extra.data()}});
    CHECK_THROWS_WITH(tt::io::average_model_dirs(tmp.file("avg"), {a, b}),
                      Catch::Contains(b + "/model.safetensors") && Catch::Contains("'decoder.extra' is not in"));
  }
  SECTION("integer tensors in every source") {
    FakeModel ints;
    ints.bias_dtype = StDType::i32;
    const std::string c = ints.write(tmp.file("c")), d = ints.write(tmp.file("d"));
    CHECK_THROWS_WITH(tt::io::average_model_dirs(tmp.file("avg"), {c, d}),
                      Catch::Contains(c + "/model.safetensors") && Catch::Contains("'encoder.bias' is I32"));
  }
  SECTION("a diverged checkpoint") {
    FakeModel nan;
    nan.bias = {0, std::numeric_limits<float>::infinity(), 0};
    const std::string b = nan.write(tmp.file("b"));
    CHECK_THROWS_WITH(tt::io::average_model_dirs(tmp.file("avg"), {a, b}),
                      Catch::Contains(b + "/model.safetensors") && Catch::Contains("'encoder.bias'") &&
                          Catch::Contains("index 1"));
  }
  CHECK_FALSE(fs::exists(tmp.file("avg")));
}

TEST_CASE("the output appears atomically and is replaced only when asked, and only a model directory", "[average]") {
  tt::test::TmpDir tmp;
  const auto dirs = three_models(tmp);
  const std::string out = tmp.file("out/avg");  // parents are created
  tt::io::average_model_dirs(out, {dirs[0], dirs[1]});
  CHECK(tt::io::SafetensorsReader(out + "/model.safetensors").read_f32("encoder.bias")[0] == 1.5f);

  CHECK_THROWS_AS(tt::io::average_model_dirs(out, dirs), tt::IoError);  // exists, no replace
  CHECK(tt::io::SafetensorsReader(out + "/model.safetensors").read_f32("encoder.bias")[0] == 1.5f);

  tt::io::AverageOptions replace;
  replace.replace = true;
  std::ofstream(out + "/stale.txt") << "from the old directory";
  tt::io::average_model_dirs(out, dirs, replace);
  CHECK(tt::io::SafetensorsReader(out + "/model.safetensors").read_f32("encoder.bias")[0] == 2.0f);
  CHECK_FALSE(fs::exists(out + "/stale.txt"));
  CHECK(listing(tmp.file("out")).size() == 4);  // avg + 3 files: the old copy and temporaries are gone

  // A failing average leaves the existing output untouched.
  FakeModel other;
  other.config.heads = 8;
  const std::string bad = other.write(tmp.file("bad"));
  CHECK_THROWS_AS(tt::io::average_model_dirs(out, {dirs[0], bad}, replace), tt::FormatError);
  CHECK(tt::io::SafetensorsReader(out + "/model.safetensors").read_f32("encoder.bias")[0] == 2.0f);
  CHECK(listing(tmp.file("out")).size() == 4);

  // Never replaces a run directory, a non-model directory or a source.
  fs::create_directories(tmp.file("run/checkpoints"));
  std::ofstream(tmp.file("run/config.json")) << "{}";
  CHECK_THROWS_WITH(tt::io::average_model_dirs(tmp.file("run"), dirs, replace), Catch::Contains("not a tt model directory"));
  fs::create_directories(tmp.file("notes"));
  std::ofstream(tmp.file("notes/todo.txt")) << "keep me";
  CHECK_THROWS_WITH(tt::io::average_model_dirs(tmp.file("notes"), dirs, replace), Catch::Contains("not a tt model directory"));
  CHECK(tt::test::read_file(tmp.file("notes/todo.txt")) == "keep me");
  CHECK_THROWS_WITH(tt::io::average_model_dirs(dirs[0], dirs, replace), Catch::Contains("also a source"));
  CHECK_THROWS_WITH(tt::io::average_model_dirs(tmp.file("x"), {dirs[0], dirs[0] + "/"}), Catch::Contains("given twice"));
}

TEST_CASE("a missing source or a run directory given as a source is an error naming it", "[average]") {
  tt::test::TmpDir tmp;
  const auto dirs = three_models(tmp);
  CHECK_THROWS_AS(tt::io::average_model_dirs(tmp.file("avg"), {dirs[0], tmp.file("nope")}), tt::IoError);
  CHECK_THROWS_WITH(tt::io::average_model_dirs(tmp.file("avg"), {dirs[0], tmp.file("nope")}),
                    Catch::Contains(tmp.file("nope")));
  fs::remove(dirs[1] + "/spm.model");
  CHECK_THROWS_WITH(tt::io::average_model_dirs(tmp.file("avg"), {dirs[0], dirs[1]}),
                    Catch::Contains(dirs[1] + "/spm.model"));
  fs::create_directories(tmp.file("run/checkpoints"));
  CHECK_THROWS_WITH(tt::io::average_model_dirs(tmp.file("avg"), {tmp.file("run")}),
                    Catch::Contains("training run directory"));
  CHECK_THROWS_AS(tt::io::average_model_dirs(tmp.file("avg"), {}), tt::Error);
  CHECK_FALSE(fs::exists(tmp.file("avg")));
}

// ---- checkpoint selection -----------------------------------------------------------------------------

namespace {

// A run directory with checkpoints at the given steps (empty folders suffice for selection) and a log.
std::string fake_run(const tt::test::TmpDir& tmp, const std::vector<int>& steps, const std::string& log) {
  for (int s : steps) {
    char name[32];
    std::snprintf(name, sizeof name, "run/checkpoints/step-%06d", s);
    fs::create_directories(tmp.file(name));
  }
  fs::create_directories(tmp.file("run/checkpoints/step-000900.tmp.12.0"));  // a temporary: ignored
  tmp.write("run/checkpoints/README", "");
  tmp.write("run/log.jsonl", log);
  return tmp.file("run");
}

std::vector<int64_t> steps_of(const tt::io::CheckpointSelection& s) {
  std::vector<int64_t> out;
  for (const auto& c : s.checkpoints) out.push_back(c.step);
  return out;
}

std::string valid_line(int step, double bleu) {
  char name[32];
  std::snprintf(name, sizeof name, "checkpoints/step-%06d", step);
  return nlohmann::json{{"type", "valid"}, {"step", step}, {"loss", 2.0}, {"ppl", 7.4}, {"bleu", bleu},
                        {"checkpoint", name}}.dump() + "\n";
}

}  // namespace

TEST_CASE("select --last picks the highest steps that exist", "[average][selection]") {
  tt::test::TmpDir tmp;
  const std::string run = fake_run(tmp, {100, 1200, 300, 1000000}, "");
  const auto all = tt::io::list_checkpoints(run);
  REQUIRE(all.size() == 4);
  CHECK(all[3].dir == tmp.file("run/checkpoints/step-1000000"));  // seven digits sort by number
  auto s = tt::io::select_last_checkpoints(run + "/", 2);
  CHECK(steps_of(s) == std::vector<int64_t>{1200, 1000000});
  CHECK(s.notes.empty());
  s = tt::io::select_last_checkpoints(run, 9);
  CHECK(steps_of(s) == std::vector<int64_t>{100, 300, 1200, 1000000});
  REQUIRE(s.notes.size() == 1);
  CHECK_THAT(s.notes[0], Catch::Contains("only 4") && Catch::Contains("9"));

  tt::test::TmpDir empty;
  fs::create_directories(empty.file("run/checkpoints"));
  CHECK_THROWS_WITH(tt::io::select_last_checkpoints(empty.file("run"), 2), Catch::Contains("no checkpoints"));
  CHECK_THROWS_WITH(tt::io::select_last_checkpoints(empty.path(), 2), Catch::Contains("no checkpoints folder"));
}

TEST_CASE("select --best ranks by logged validation BLEU, ties to the later step, deleted ones passed over",
          "[average][selection]") {
  tt::test::TmpDir tmp;
  const std::string log = R"({"type":"train","step":50,"loss":5.0})" "\n" + valid_line(100, 20.0) +
                          valid_line(200, 31.0) +  // deleted below (keep-last)
                          valid_line(300, 25.0) + valid_line(400, 27.5) + valid_line(500, 25.0) +
                          R"({"type":"valid","step":550,"loss":2.0,"bleu":40.0,"checkpoint":null})" "\n" +
                          R"({"type":"valid","step":600,"loss":2.0})" "\n" +  // no BLEU
                          valid_line(700, 22.0) + "\n";
  const std::string run = fake_run(tmp, {100, 300, 400, 500, 600, 700}, log);

  auto s = tt::io::select_best_checkpoints(run, 3);
  CHECK(steps_of(s) == std::vector<int64_t>{300, 400, 500});  // 27.5, 25.0, 25.0 (ascending step order)
  REQUIRE(s.checkpoints.size() == 3);
  CHECK(*s.checkpoints[1].bleu == 27.5);
  CHECK(s.checkpoints[1].dir == run + "/checkpoints/step-000400");
  REQUIRE(s.notes.size() == 1);
  CHECK_THAT(s.notes[0], Catch::Contains("1 validation line"));

  s = tt::io::select_best_checkpoints(run, 2);  // 300 and 500 tie at 25.0: the later step wins
  CHECK(steps_of(s) == std::vector<int64_t>{400, 500});

  s = tt::io::select_best_checkpoints(run, 10);  // 100, 300, 400, 500, 700 have BLEU; 600 does not
  CHECK(steps_of(s) == std::vector<int64_t>{100, 300, 400, 500, 700});
  CHECK_THAT(s.notes.back(), Catch::Contains("only 5"));

  // A re-validation after a resume: the last line counts.
  tmp.write("run/log.jsonl", log + valid_line(100, 50.0));
  s = tt::io::select_best_checkpoints(run, 1);
  CHECK(steps_of(s) == std::vector<int64_t>{100});
  // An explicit log file.
  tmp.write("other.jsonl", valid_line(300, 1.0));
  s = tt::io::select_best_checkpoints(run, 1, tmp.file("other.jsonl"));
  CHECK(steps_of(s) == std::vector<int64_t>{300});
}

TEST_CASE("select --best: a malformed log is an error naming file:line, a torn last line is passed over",
          "[average][selection]") {
  tt::test::TmpDir tmp;
  const std::string run = fake_run(tmp, {100, 200}, valid_line(100, 20.0) + "{oops\n" + valid_line(200, 21.0));
  CHECK_THROWS_AS(tt::io::select_best_checkpoints(run, 1), tt::FormatError);
  CHECK_THROWS_WITH(tt::io::select_best_checkpoints(run, 1), Catch::Contains(run + "/log.jsonl:2"));

  // A whole line whose number overflows a double is malformed too (nlohmann's out_of_range).
  tmp.write("run/log.jsonl", valid_line(100, 20.0) + R"({"type":"valid","step":200,"bleu":1e999})" "\n");
  CHECK_THROWS_WITH(tt::io::select_best_checkpoints(run, 1), Catch::Contains(run + "/log.jsonl:2"));

  tmp.write("run/log.jsonl", valid_line(100, 20.0) + valid_line(200, 21.0) + R"({"type":"valid","st)");
  auto s = tt::io::select_best_checkpoints(run, 1);
  CHECK(steps_of(s) == std::vector<int64_t>{200});
  REQUIRE(s.notes.size() == 1);
  CHECK_THAT(s.notes[0], Catch::Contains("log.jsonl:3"));

  tmp.write("run/log.jsonl", R"({"type":"train","step":1})" "\n");
  CHECK_THROWS_WITH(tt::io::select_best_checkpoints(run, 1), Catch::Contains("no validation BLEU"));
  fs::remove(tmp.file("run/log.jsonl"));
  CHECK_THROWS_AS(tt::io::select_best_checkpoints(run, 1), tt::IoError);
}
